import LatchkeyEssentials
public import LatchkeyProviders
public import LatchkeyVault

/// The answer to git's `get`: `username=…` and `password=<access token>` (git-credential(1)).
public struct GitCredential: Sendable, Equatable {
    public var username: String
    public var password: Secret

    public init(username: String, password: Secret) {
        self.username = username
        self.password = password
    }

    /// The lines git reads back; the only place the token is written out.
    public var exposedAnswer: String { "username=\(username)\npassword=\(password.exposedValue)\n" }
}

extension GitCredentialRequest {
    /// The provider whose `git_hosts` names this request's host, or `nil` when Latchkey should
    /// stay silent so that git asks its other helpers: no host, a host no provider maps, or a
    /// protocol other than https (http only for loopback hosts, as for endpoints).
    public func provider(in providers: [Provider]) throws(GitCredentialError) -> Provider? {
        guard let host, case .success(let requested) = GitHost.parse(host) else { return nil }
        switch scheme {
        case "https": break
        case "http" where requested.isLoopback: break
        default: return nil
        }
        let matching = providers.filter { $0.gitHosts.contains(requested) }
        guard matching.count <= 1 else { throw .severalProviders(host: requested.description, providers: matching.map(\.name)) }
        return matching.first
    }
}

public enum GitCredentialError: LatchkeyError, Equatable {
    /// Two provider files list the same host: which token git should get is not Latchkey's guess.
    case severalProviders(host: String, providers: [String])

    public var category: FailureCategory { .configuration }

    public var description: String {
        switch self {
        case .severalProviders(let host, let providers):
            return "git_hosts of several providers name \(TerminalText.sanitized(host, maxLength: 100)) ("
                + providers.joined(separator: ", ") + "); keep it in one provider file"
        }
    }
}
