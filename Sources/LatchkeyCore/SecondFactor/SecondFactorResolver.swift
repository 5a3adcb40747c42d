public import LatchkeyVault

/// The second-factor sign-in as a pure state machine: hints chosen → session → code → tokens.
///
/// It performs nothing. Each event returns the `Action` its driver (`SecondFactorSignIn`, the
/// screen) carries out, and errors come back as events, so every branch is testable without a
/// network. Modelled on the iOS SDK's `MultiFactorResolver` (protocol notes §5, §6).
public struct SecondFactorResolver: Sendable {
    /// What the driver does next.
    public enum Action: Sendable, Equatable {
        /// Show `hints` and ask which factor to use.
        case chooseHint([SecondFactorHint])
        /// Call `startSignIn`. `notice` says why again (the previous code expired), `nil` the first time.
        case startVerification(SecondFactorHint, PendingCredential, notice: SecondFactorError?)
        /// Ask for the code of `session`; `problem` is the previous attempt's error (wrong code).
        case askForCode(VerificationSession, problem: SecondFactorError?)
        /// Call `finalizeSignIn`.
        case finalize(VerificationSession, code: Secret, PendingCredential)
        /// Finished: store the tokens; `factor` is the second factor used, `nil` without one.
        case signedIn(SignInTokens, factor: SecondFactorHint?)
        /// Stopped: `error.recovery` tells the screen what to offer (wait, restart, …).
        case fail(SecondFactorError)
    }

    enum State: Sendable, Equatable {
        case firstFactor
        case choosingHint([SecondFactorHint], PendingCredential)
        case starting(SecondFactorHint, PendingCredential)
        case awaitingCode(VerificationSession, PendingCredential)
        case finalizing(VerificationSession, PendingCredential)
        case finished
    }

    private(set) var state: State = .firstFactor
    /// Codes re-sent automatically after expiry; bounded so a server that keeps saying
    /// "expired" cannot loop the sign-in forever.
    private var automaticResends = 0
    public static let maximumAutomaticResends = 3

    public init() {}

    // MARK: - Events

    public mutating func firstFactorFinished(_ outcome: FirstFactorOutcome) -> Action {
        guard case .firstFactor = state else { return unexpected("first factor") }
        switch outcome {
        case .signedIn(let tokens):
            state = .finished
            return .signedIn(tokens, factor: nil)
        case .secondFactorRequired(let hints, let pending):
            guard !hints.isEmpty else {
                state = .finished
                return .fail(.malformedResponse(backend: "the sign-in service", reason: "a second factor is required but none is enrolled"))
            }
            state = .choosingHint(hints, pending)
            return .chooseHint(hints)
        }
    }

    public mutating func hintChosen(_ hint: SecondFactorHint) -> Action {
        guard case .choosingHint(let hints, let pending) = state else { return unexpected("hint chosen") }
        guard hints.contains(hint) else { return .chooseHint(hints) }
        state = .starting(hint, pending)
        return .startVerification(hint, pending, notice: nil)
    }

    public mutating func verificationStarted(_ session: VerificationSession) -> Action {
        guard case .starting(_, let pending) = state else { return unexpected("verification started") }
        state = .awaitingCode(session, pending)
        return .askForCode(session, problem: nil)
    }

    public mutating func codeEntered(_ code: Secret) -> Action {
        guard case .awaitingCode(let session, let pending) = state else { return unexpected("code entered") }
        let trimmed = code.exposedValue.filter { !$0.isWhitespace }
        guard !trimmed.isEmpty else { return .askForCode(session, problem: .wrongCode) }
        state = .finalizing(session, pending)
        return .finalize(session, code: Secret(trimmed), pending)
    }

    /// The person asked for a new code (or, for TOTP, simply to try again).
    public mutating func resendRequested() -> Action {
        guard case .awaitingCode(let session, let pending) = state else { return unexpected("resend requested") }
        if session.hint.kind == .totp { return .askForCode(session, problem: nil) }
        state = .starting(session.hint, pending)
        return .startVerification(session.hint, pending, notice: nil)
    }

    public mutating func finalized(_ tokens: SignInTokens) -> Action {
        guard case .finalizing(let session, _) = state else { return unexpected("finalized") }
        state = .finished
        return .signedIn(tokens, factor: session.hint)
    }

    /// A backend call failed; the error's `recovery` decides whether the flow goes on.
    public mutating func failed(_ error: SecondFactorError) -> Action {
        switch (state, error.recovery) {
        case (.finalizing(let session, let pending), .retryCode):
            state = .awaitingCode(session, pending)
            return .askForCode(session, problem: error)
        case (.finalizing(let session, let pending), .resendCode) where session.hint.kind == .totp:
            state = .awaitingCode(session, pending)
            return .askForCode(session, problem: error)
        case (.finalizing(let session, let pending), .resendCode) where automaticResends < Self.maximumAutomaticResends:
            automaticResends += 1
            state = .starting(session.hint, pending)
            return .startVerification(session.hint, pending, notice: error)
        default:
            state = .finished
            return .fail(error)
        }
    }

    private mutating func unexpected(_ event: String) -> Action {
        state = .finished
        return .fail(.malformedResponse(backend: "the sign-in flow", reason: "\(event) arrived out of order"))
    }
}
