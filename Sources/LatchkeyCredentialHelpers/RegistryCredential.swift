import LatchkeyEssentials
public import LatchkeyProviders
public import LatchkeyVault

/// The answer to a credential helper's `get`: `{"ServerURL", "Username", "Secret"}`
/// (docs/kubernetes-and-registries.md). A `Username` of `<token>` makes `Secret` an identity
/// token; any other makes it a password, which is where cloud registries take an access token.
///
/// Encoded only through a JSON encoder (`Output.json`), the one way the token is written out.
public struct RegistryCredential: Sendable, Encodable, Equatable {
    /// `ServerURL`: the server URL as the client sent it.
    public var serverURL: String
    /// `Username`: the provider's `registry_username`.
    public var username: String
    /// `Secret`: a valid access token.
    public var secret: Secret

    public init(serverURL: String, username: String, secret: Secret) {
        self.serverURL = serverURL
        self.username = username
        self.secret = secret
    }

    /// The user name that marks `Secret` as an identity token.
    public static let identityTokenUsername = "<token>"

    /// What `get` answers on stdout, with a non-zero exit, for a server it has nothing for; clients
    /// compare the text exactly and then go on without credentials.
    public static let notFoundMessage = "credentials not found in native keychain"

    private enum CodingKeys: String, CodingKey {
        case serverURL = "ServerURL"
        case username = "Username"
        case secret = "Secret"
    }
}

extension RegistryServerURL {
    /// The provider whose `registry_hosts` names this server, or `nil` when Latchkey has nothing
    /// for it: no provider maps the host, or it is plain http to a host that is not loopback.
    public func provider(in providers: [Provider]) throws(RegistryCredentialError) -> Provider? {
        guard allowsToken else { return nil }
        let matching = providers.filter { $0.registryHosts.contains(host) }
        guard matching.count <= 1 else { throw .severalProviders(host: host.description, providers: matching.map(\.name)) }
        return matching.first
    }
}

extension RegistryCredential {
    /// What `list` answers: every host in a provider's `registry_hosts` and the user name `get`
    /// gives for it. Nothing is read from the vault: `get` signs in when it must.
    public static func listing(of providers: [Provider]) -> [String: String] {
        var listing: [String: String] = [:]
        for provider in providers {
            for host in provider.registryHosts { listing[host.description] = provider.registryUsername }
        }
        return listing
    }
}

public enum RegistryCredentialError: LatchkeyError, Equatable {
    /// Two provider files list the same registry: which token it should get is not Latchkey's guess.
    case severalProviders(host: String, providers: [String])

    public var category: FailureCategory { .configuration }

    public var description: String {
        switch self {
        case .severalProviders(let host, let providers):
            return "registry_hosts of several providers name \(TerminalText.sanitized(host, maxLength: 100)) ("
                + providers.joined(separator: ", ") + "); keep it in one provider file"
        }
    }
}
