public import LatchkeyVault

/// Why the userinfo answer cannot name the account of a plain OAuth 2.0 sign-in.
public enum UserinfoError: LatchkeyError, Equatable {
    case unusable(provider: String, reason: String)

    public var category: FailureCategory { .rejected }

    public var description: String {
        switch self {
        case .unusable(let provider, let reason): return "\(provider): the userinfo response cannot identify the account: \(reason)"
        }
    }
}
