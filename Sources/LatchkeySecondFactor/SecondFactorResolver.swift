public import LatchkeyVault

/// The second factor as a pure state machine: first-factor answer → hint chosen → code sent →
/// code entered → tokens. The same machine proves a phone being enrolled, from "code sent" on, so
/// both get the same retries and the same bound on automatic resends.
///
/// It performs nothing. Each event returns the `Action` its driver (`SignInFlow`, run by
/// `SignInRunner`) carries out, and errors come back as events, so every branch is testable
/// without a network. Modelled on the Firebase SDKs' `MultiFactorResolver`
/// (docs/firebase-mfa-protocol.md §5, §6).
public struct SecondFactorResolver: Sendable {
    /// What the driver does next.
    public enum Action: Sendable, Equatable {
        /// Show `hints` and ask which factor to use.
        case chooseHint([SecondFactorHint])
        /// Send a code to `hint` for `purpose`. `notice` says why again (the previous code
        /// expired), `nil` the first time.
        case startVerification(SecondFactorHint, VerificationPurpose, notice: FirebaseAuthError?)
        /// Ask for the code of `session`; `problem` is the previous attempt's error (wrong code).
        case askForCode(VerificationSession, problem: FirebaseAuthError?)
        /// Prove `purpose` with the code.
        case finalize(VerificationSession, code: Secret, VerificationPurpose)
        /// Proven: store the tokens; `factor` is the second factor used, `nil` without one.
        case verified(SignInTokens, factor: SecondFactorHint?)
        /// Stopped: `error.recovery` tells the screen what to offer (wait, restart, …).
        case fail(FirebaseAuthError)
        /// An event arrived that the current state does not expect: the driver's bug.
        case outOfOrder(String)
    }

    enum State: Sendable, Equatable {
        case firstFactor
        case choosingHint([SecondFactorHint], PendingCredential)
        case starting(SecondFactorHint, VerificationPurpose)
        case awaitingCode(VerificationSession, VerificationPurpose)
        case finalizing(VerificationSession, VerificationPurpose)
        case finished
    }

    private(set) var state: State
    /// Codes re-sent automatically after expiry; bounded so a server that keeps saying
    /// "expired" cannot loop the sign-in forever.
    private var automaticResends = 0
    public static let maximumAutomaticResends = 3

    /// A sign-in, waiting for the first factor's answer.
    public init() {
        state = .firstFactor
    }

    /// Enrolling `enrollment`'s phone (shown as `hint`): the first action sends its code.
    public static func enrolling(_ enrollment: PhoneEnrollment, as hint: SecondFactorHint) -> (SecondFactorResolver, Action) {
        var resolver = SecondFactorResolver()
        resolver.state = .starting(hint, .enrollment(enrollment))
        return (resolver, .startVerification(hint, .enrollment(enrollment), notice: nil))
    }

    // MARK: - Events

    public mutating func firstFactorFinished(_ outcome: FirstFactorOutcome) -> Action {
        guard case .firstFactor = state else { return outOfOrder("the first factor's answer") }
        switch outcome {
        case .signedIn(let tokens):
            state = .finished
            return .verified(tokens, factor: nil)
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
        guard case .choosingHint(let hints, let pending) = state else { return outOfOrder("a chosen factor") }
        guard hints.contains(hint) else { return .chooseHint(hints) }
        state = .starting(hint, .signIn(pending))
        return .startVerification(hint, .signIn(pending), notice: nil)
    }

    public mutating func verificationStarted(_ session: VerificationSession) -> Action {
        guard case .starting(_, let purpose) = state else { return outOfOrder("a sent code") }
        state = .awaitingCode(session, purpose)
        return .askForCode(session, problem: nil)
    }

    public mutating func codeEntered(_ code: Secret) -> Action {
        guard case .awaitingCode(let session, let purpose) = state else { return outOfOrder("an entered code") }
        let trimmed = code.exposedValue.filter { !$0.isWhitespace }
        guard !trimmed.isEmpty else { return .askForCode(session, problem: .wrongCode) }
        state = .finalizing(session, purpose)
        return .finalize(session, code: Secret(trimmed), purpose)
    }

    /// The person asked for a new code (or, for TOTP, simply to try again).
    public mutating func resendRequested() -> Action {
        guard case .awaitingCode(let session, let purpose) = state else { return outOfOrder("a request for a new code") }
        if session.hint.kind == .totp { return .askForCode(session, problem: nil) }
        state = .starting(session.hint, purpose)
        return .startVerification(session.hint, purpose, notice: nil)
    }

    public mutating func finalized(_ tokens: SignInTokens) -> Action {
        guard case .finalizing(let session, _) = state else { return outOfOrder("the proof's answer") }
        state = .finished
        return .verified(tokens, factor: session.hint)
    }

    /// A backend call failed; the error's `recovery` decides whether the flow goes on.
    public mutating func failed(_ error: FirebaseAuthError) -> Action {
        switch (state, error.recovery) {
        case (.finalizing(let session, let purpose), .retryCode):
            state = .awaitingCode(session, purpose)
            return .askForCode(session, problem: error)
        case (.finalizing(let session, let purpose), .resendCode) where session.hint.kind == .totp:
            state = .awaitingCode(session, purpose)
            return .askForCode(session, problem: error)
        case (.finalizing(let session, let purpose), .resendCode) where automaticResends < Self.maximumAutomaticResends:
            automaticResends += 1
            state = .starting(session.hint, purpose)
            return .startVerification(session.hint, purpose, notice: error)
        default:
            state = .finished
            return .fail(error)
        }
    }

    private mutating func outOfOrder(_ event: String) -> Action {
        state = .finished
        return .outOfOrder(event)
    }
}

/// What a verification code proves.
public enum VerificationPurpose: Sendable, Equatable {
    /// The second factor of a sign-in whose first factor passed (`mfaPendingCredential`).
    case signIn(PendingCredential)
    /// A new phone for a signed-in account.
    case enrollment(PhoneEnrollment)
}

/// A phone being enrolled as a second factor of the signed-in account holding `idToken`.
public struct PhoneEnrollment: Sendable, Equatable {
    /// E.164, as typed.
    public var phoneNumber: String
    /// The person's label for it ("Work phone").
    public var displayName: String?
    public var idToken: Secret

    public init(phoneNumber: String, displayName: String?, idToken: Secret) {
        self.phoneNumber = phoneNumber
        self.displayName = displayName
        self.idToken = idToken
    }
}
