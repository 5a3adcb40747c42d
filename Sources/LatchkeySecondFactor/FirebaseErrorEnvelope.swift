import Foundation

/// Google's error envelope, as Identity Toolkit and securetoken send it (docs/firebase-mfa-protocol.md §3):
/// `{"error": {"code": 400, "message": "CODE : detail", "errors": [{"message", "domain", "reason"}]}}`.
struct FirebaseErrorEnvelope: Decodable, Equatable {
    struct Body: Decodable, Equatable {
        /// `code`: the HTTP status again.
        var code: Int?
        /// `message`: `CODE` or `CODE : human detail`.
        var message: String
        /// `status`: set by Google's generic errors (`INVALID_ARGUMENT`), absent on Auth ones.
        var status: String?
    }

    var error: Body

    /// The part of `message` before the first colon, trimmed: what clients match on
    /// (the iOS SDK's `splitStringAtFirstColon`).
    var code: String {
        let message = error.message
        guard let colon = message.firstIndex(of: ":") else { return message.trimmingCharacters(in: .whitespaces) }
        return message[..<colon].trimmingCharacters(in: .whitespaces)
    }

    /// The human detail after the first colon, if any.
    var detail: String {
        guard let colon = error.message.firstIndex(of: ":") else { return "" }
        return error.message[error.message.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    /// An envelope around a bare message, for errors that arrive as `errorMessage` with HTTP 200.
    init(message: String) {
        error = Body(code: 200, message: message, status: nil)
    }

    init?(body: [UInt8]) {
        guard let envelope = try? JSONDecoder().decode(Self.self, from: Data(body)) else { return nil }
        self = envelope
    }

    /// The typed error for this server code.
    var secondFactorError: FirebaseAuthError {
        let code = self.code
        switch code {
        case "INVALID_CODE", "MISSING_CODE": return .wrongCode
        case "SESSION_EXPIRED", "INVALID_SESSION_INFO", "CODE_EXPIRED": return .codeExpired(code: code)
        case "TOO_MANY_ATTEMPTS_TRY_LATER": return .tooManyAttempts
        case "QUOTA_EXCEEDED": return .quotaExceeded
        case "INVALID_MFA_PENDING_CREDENTIAL", "MISSING_MFA_PENDING_CREDENTIAL", "MISSING_CREDENTIAL":
            return .pendingCredentialInvalid(code: code)
        case "INVALID_LOGIN_CREDENTIALS", "EMAIL_NOT_FOUND", "INVALID_PASSWORD", "INVALID_EMAIL":
            return .invalidCredentials(code: code)
        case "USER_DISABLED": return .userDisabled
        case "UNVERIFIED_EMAIL": return .unverifiedEmail
        case "INVALID_APP_CREDENTIAL", "MISSING_APP_CREDENTIAL", "CAPTCHA_CHECK_FAILED", "MISSING_RECAPTCHA_TOKEN",
            "INVALID_RECAPTCHA_TOKEN", "MISSING_CLIENT_TYPE", "MISSING_RECAPTCHA_VERSION", "INVALID_RECAPTCHA_VERSION",
            "INVALID_RECAPTCHA_ACTION", "RECAPTCHA_NOT_ENABLED":
            return .appVerificationRequired(code: code, message: detail)
        case "INVALID_ID_TOKEN", "TOKEN_EXPIRED", "USER_NOT_FOUND", "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "INVALID_REFRESH_TOKEN":
            return .sessionEnded(code: code)
        default:
            // The Firebase emulator words a bad pending credential as a validation message.
            if code.contains("mfaPendingCredential") { return .pendingCredentialInvalid(code: "INVALID_MFA_PENDING_CREDENTIAL") }
            return .server(backend: "Firebase", code: code, message: detail)
        }
    }
}
