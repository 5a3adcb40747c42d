public import LatchkeyVault

/// Why an account could not be refreshed.
public enum RefreshError: LatchkeyError, Equatable {
    case noRefreshToken(account: String)
    case refreshTokenRejected(account: String, provider: String)
    case identityChanged

    public var category: FailureCategory {
        switch self {
        case .noRefreshToken, .refreshTokenRejected: return .notFound
        case .identityChanged: return .rejected
        }
    }

    public var description: String {
        switch self {
        case .noRefreshToken(let account):
            return
                "the access token of \(TerminalText.sanitized(account, maxLength: 100)) has expired and the provider gave no refresh token; sign in again with `latchkey login`"
        case .refreshTokenRejected(let account, let provider):
            return "\(provider) no longer accepts the refresh token of \(TerminalText.sanitized(account, maxLength: 100)) (invalid_grant: "
                + "revoked, expired or signed out elsewhere); sign in again with `latchkey login \(provider)`. The account was kept."
        case .identityChanged:
            return "the refreshed ID token names a different account; the refresh was rejected"
        }
    }
}
