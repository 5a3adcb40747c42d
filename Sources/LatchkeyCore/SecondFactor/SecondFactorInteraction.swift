/// The person's side of a second-factor sign-in: the terminal prompts, the screen, or a test script.
public protocol SecondFactorInteraction: Sendable {
    /// The first factor for `provider`: email and password asked from the person, or an ID token
    /// from the OpenID provider named by `first_factor = "provider:NAME"`.
    func firstFactor(for provider: Provider) async throws -> FirstFactor
    /// Which factor to use; `nil` cancels.
    func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint?
    /// A code was sent to (or is expected from) `session.hint`; `notice` says why it was sent again.
    func verificationStarted(_ session: VerificationSession, notice: SecondFactorError?) async
    /// The code the person entered, a request for a new one, or cancel; `problem` is the last error.
    func enterCode(for session: VerificationSession, problem: SecondFactorError?) async -> CodeAnswer
}

/// The person's answer when asked for a code.
public enum CodeAnswer: Sendable, Equatable {
    case code(Secret)
    case resend
    case cancel
}
