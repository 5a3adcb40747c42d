import Foundation
import LatchkeyEssentials
public import LatchkeyVault

/// Why an account could not be refreshed.
public enum RefreshError: LatchkeyError, Equatable {
    case noRefreshToken(account: String, provider: String)
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
        case .noRefreshToken(let account, let provider):
            return
                "the access token of \(TerminalText.sanitized(account, maxLength: 100)) has expired and \(provider) gave no refresh token; "
                + "sign in again with `\(Self.login(provider, account))`"
        case .refreshTokenRejected(let account, let provider):
            return "\(provider) no longer accepts the refresh token of \(TerminalText.sanitized(account, maxLength: 100)) (invalid_grant: "
                + "revoked, expired or signed out elsewhere); sign in again with `\(Self.login(provider, account))`. The account was kept."
        case .identityChanged:
            return
                "the refreshed tokens name a different account (another subject in the new ID token, or another client_id or issuer in the provider file); the refresh was rejected and the account kept"
        }
    }

    /// The command that signs this one account in again, with `arguments` after it, each word
    /// quoted for a shell when it needs it.
    package static func login(_ provider: String, _ account: String, _ arguments: String...) -> String {
        let words = ([provider + ":" + account] + arguments).map { TerminalText.sanitized($0, maxLength: 200) }
        return (["latchkey", "login"] + words.map(shellWord)).joined(separator: " ")
    }

    private static func shellWord(_ word: String) -> String {
        let plain = word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "@._:+-/=,".contains($0)) }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
