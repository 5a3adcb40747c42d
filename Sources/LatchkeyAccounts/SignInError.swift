import LatchkeyEssentials
public import LatchkeyVault

/// Why a sign-in stopped, other than an error from the provider's endpoints.
public enum SignInError: LatchkeyError, Equatable {
    case missingClientID(provider: String, file: String)
    case timedOut(provider: String, seconds: Int)
    /// Paste mode: no redirect URL was pasted in time.
    case pasteTimedOut(provider: String, seconds: Int)
    case cancelled
    case noIDToken(account: String)
    /// A re-sign-in of one account came back as another.
    case differentAccount(expected: String, got: String)
    /// `first_factor = "provider:NAME"` names a provider that issues no ID token.
    case notOpenID(provider: String, firebase: String)
    /// The sign-in's steps were driven out of order: a bug in Latchkey, not the provider's fault.
    case outOfOrder(String)

    public var category: FailureCategory {
        switch self {
        case .missingClientID, .notOpenID: return .configuration
        case .differentAccount: return .rejected
        case .timedOut, .pasteTimedOut, .cancelled: return .unavailable
        case .noIDToken: return .notFound
        case .outOfOrder: return .unexpected
        }
    }

    public var description: String {
        switch self {
        case .missingClientID(let provider, let file):
            return
                "\(provider) has no client_id yet: register a native/desktop client at the provider and set client_id in \(file), or, where the provider registers clients itself (a registration_endpoint in its discovery), set registration = \"dynamic\" there instead"
        case .timedOut(let provider, let seconds):
            return
                "no answer from the browser for \(provider) within \(seconds) s; the sign-in was abandoned (try --paste when the browser runs on another machine)"
        case .pasteTimedOut(let provider, let seconds):
            return "no redirect URL was pasted for \(provider) within \(seconds) s; the sign-in was abandoned (--timeout sets the wait)"
        case .cancelled:
            return "the sign-in was cancelled"
        case .differentAccount(let expected, let got):
            return
                "the provider signed in \(TerminalText.sanitized(got, maxLength: 100)), not \(TerminalText.sanitized(expected, maxLength: 100)) as asked; nothing was stored (sign out of the provider in the browser, or run `latchkey login` without an account to add this one)"
        case .notOpenID(let provider, let firebase):
            return
                "\(firebase)'s first_factor names \(provider), which is not a kind = \"oidc\" provider: only an ID token can be the first factor"
        case .noIDToken(let account):
            return "\(TerminalText.sanitized(account, maxLength: 100)) has no ID token (plain OAuth 2.0 provider?)"
        case .outOfOrder(let what):
            return "the sign-in stopped: \(what) arrived out of order, which is a bug in Latchkey (please report it); nothing was stored"
        }
    }
}
