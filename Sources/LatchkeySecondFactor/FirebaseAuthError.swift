import LatchkeyEssentials
public import LatchkeyOAuth
public import LatchkeySupport
public import LatchkeyVault

/// Why a call to a firebase provider's sign-in backend failed (the Identity Toolkit or an exec
/// plugin: first factor, second factor, enrollment or refresh), and what the person can do about it.
///
/// Server codes are kept (`code`) so an unknown one is still shown; messages name fields, never
/// codes, passwords or tokens.
public enum FirebaseAuthError: LatchkeyError, Equatable {
    /// What the screen should offer after the error.
    public enum Recovery: Sendable, Equatable {
        /// Ask for the code again (same session).
        case retryCode
        /// Send a new code (the code or its session expired).
        case resendCode
        /// Wait before trying again (rate limit or quota).
        case wait
        /// Start again from the first factor (the pending credential is no longer valid).
        case restart
        /// Verify the email address first, then enroll.
        case verifyEmail
        /// Nothing to retry here: fix the configuration, the account or the network.
        case none
    }

    /// `INVALID_CODE`: the code is wrong.
    case wrongCode
    /// `SESSION_EXPIRED`, `INVALID_SESSION_INFO`: the code expired or was used.
    case codeExpired(code: String)
    /// `TOO_MANY_ATTEMPTS_TRY_LATER`.
    case tooManyAttempts
    /// `QUOTA_EXCEEDED`: the project's SMS quota.
    case quotaExceeded
    /// `INVALID_MFA_PENDING_CREDENTIAL`, `MISSING_CREDENTIAL`, …: start again.
    case pendingCredentialInvalid(code: String)
    /// `INVALID_LOGIN_CREDENTIALS`, `EMAIL_NOT_FOUND`, `INVALID_PASSWORD`.
    case invalidCredentials(code: String)
    /// `USER_DISABLED`.
    case userDisabled
    /// `UNVERIFIED_EMAIL`: enrollment needs a verified email.
    case unverifiedEmail
    /// `INVALID_APP_CREDENTIAL`, `MISSING_APP_CREDENTIAL`, reCAPTCHA codes: the project enforces
    /// app verification for SMS, which a terminal client cannot pass.
    case appVerificationRequired(code: String, message: String)
    /// `INVALID_ID_TOKEN`, `TOKEN_EXPIRED`, `INVALID_REFRESH_TOKEN`, `USER_NOT_FOUND`, …: sign in again.
    case sessionEnded(code: String)
    /// Any other server error, with its code and detail.
    case server(backend: String, code: String, message: String)
    /// The answer was not in the documented shape.
    case malformedResponse(backend: String, reason: String)
    /// An ID token from the backend did not verify.
    case idTokenRejected(IDTokenError)
    /// The backend could not be reached.
    case transport(TransportError)
    /// The exec plugin could not be run or broke the protocol.
    case plugin(path: String, reason: String)
    /// A phone can be enrolled only on an account of a `kind = "firebase"` provider.
    case notEnrollable(provider: String)

    public var recovery: Recovery {
        switch self {
        case .wrongCode: return .retryCode
        case .codeExpired: return .resendCode
        case .tooManyAttempts, .quotaExceeded: return .wait
        case .pendingCredentialInvalid, .invalidCredentials, .sessionEnded: return .restart
        case .unverifiedEmail: return .verifyEmail
        case .transport(let error) where error.category == .unavailable: return .wait
        default: return .none
        }
    }

    public var category: FailureCategory {
        switch self {
        case .tooManyAttempts, .quotaExceeded: return .unavailable
        case .transport(let error): return error.category
        case .sessionEnded: return .notFound
        case .plugin, .notEnrollable: return .configuration
        default: return .rejected
        }
    }

    public var description: String {
        switch self {
        case .wrongCode: return "the verification code is wrong; check it and enter it again"
        case .codeExpired(let code): return "the verification code has expired or was already used (\(code)); send a new code"
        case .tooManyAttempts:
            return "too many attempts (TOO_MANY_ATTEMPTS_TRY_LATER); wait a few minutes before trying again"
        case .quotaExceeded: return "the project's SMS quota is exhausted (QUOTA_EXCEEDED); try later or use another factor"
        case .pendingCredentialInvalid(let code):
            return "the first sign-in step is no longer valid (\(code)); sign in again from the start"
        case .invalidCredentials(let code): return "the email or password is wrong (\(code))"
        case .userDisabled: return "this account has been disabled by an administrator (USER_DISABLED)"
        case .unverifiedEmail:
            return "the account's email address is not verified (UNVERIFIED_EMAIL); verify it, then enroll the phone again"
        case .appVerificationRequired(let code, let message):
            return
                "the project demands app verification (reCAPTCHA) before sending SMS: \(code)\(message.isEmpty ? "" : " : " + TerminalText.sanitized(message, maxLength: 300)). Use a test phone number or a project without reCAPTCHA enforcement (see latchkey-mfa-plugin(7))"
        case .sessionEnded(let code): return "the session has ended at the provider (\(code)); sign in again with `latchkey login`"
        case .server(let backend, let code, let message):
            let detail = message.isEmpty ? "" : " : " + TerminalText.sanitized(message, maxLength: 300)
            return "\(backend) refused the request: \(TerminalText.sanitized(code, maxLength: 80))\(detail)"
        case .malformedResponse(let backend, let reason): return "\(backend) sent an unexpected answer: \(reason)"
        case .idTokenRejected(let error): return error.description
        case .transport(let error): return error.description
        case .plugin(let path, let reason): return "MFA plugin \(path): \(reason)"
        case .notEnrollable(let provider):
            return "\(provider) is not a kind = \"firebase\" provider: only firebase accounts can enroll a phone as a second factor"
        }
    }
}
