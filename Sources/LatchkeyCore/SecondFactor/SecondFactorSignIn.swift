/// Drives `SecondFactorResolver` with a backend and an interaction: the effects at the edge.
public struct SecondFactorSignIn: Sendable {
    public let backend: any SecondFactorBackend
    public let interaction: any SecondFactorInteraction

    public init(backend: any SecondFactorBackend, interaction: any SecondFactorInteraction) {
        self.backend = backend
        self.interaction = interaction
    }

    /// Runs the sign-in after `firstFactor`; the tokens and the second factor used, if any.
    public func run(_ firstFactor: FirstFactor) async throws(SecondFactorError) -> (SignInTokens, SecondFactorHint?) {
        var resolver = SecondFactorResolver()
        var action: SecondFactorResolver.Action
        do {
            action = resolver.firstFactorFinished(try await backend.signIn(firstFactor))
        } catch {
            throw error
        }
        while true {
            switch action {
            case .chooseHint(let hints):
                guard let hint = await interaction.chooseHint(hints) else { throw .cancelled }
                action = resolver.hintChosen(hint)
            case .startVerification(let hint, let pending, let notice):
                do {
                    let session = try await backend.startSignIn(hint: hint, pending: pending)
                    await interaction.verificationStarted(session, notice: notice)
                    action = resolver.verificationStarted(session)
                } catch {
                    action = resolver.failed(error)
                }
            case .askForCode(let session, let problem):
                switch await interaction.enterCode(for: session, problem: problem) {
                case .code(let code): action = resolver.codeEntered(code)
                case .resend: action = resolver.resendRequested()
                case .cancel: throw .cancelled
                }
            case .finalize(let session, let code, let pending):
                do {
                    action = resolver.finalized(try await backend.finalizeSignIn(session: session, code: code, pending: pending))
                } catch {
                    action = resolver.failed(error)
                }
            case .signedIn(let tokens, let factor):
                return (tokens, factor)
            case .fail(let error):
                throw error
            }
        }
    }
}
