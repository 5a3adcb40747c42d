public import LatchkeyVault

/// Why `latchkey providers remove` left a provider in place.
public enum ProviderRemovalError: LatchkeyError, Equatable {
    /// The file is in a directory other than the person's own providers.d (a system one).
    case notInOwnDirectory(file: String, directory: String)
    /// Accounts of the provider are signed in: removing it would strand their tokens unrevoked.
    case accountsSignedIn(provider: String, accounts: [String])
    case cannotDelete(file: String, reason: String)

    public var category: FailureCategory {
        switch self {
        case .notInOwnDirectory, .cannotDelete: return .cannotCreate
        case .accountsSignedIn: return .usage
        }
    }

    public var description: String {
        switch self {
        case .notInOwnDirectory(let file, let directory):
            return "\(file) is not in your providers directory \(directory); Latchkey removes only files there (providers add writes them)"
        case .accountsSignedIn(let provider, let accounts):
            let list = accounts.map { "\(provider):\($0)" }.joined(separator: ", ")
            return "\(provider) still has signed-in accounts (\(list)); sign them out first with `latchkey logout`, then remove it"
        case .cannotDelete(let file, let reason):
            return "cannot delete \(file): \(reason)"
        }
    }
}
