import Foundation
public import LatchkeyVault

/// Machine identities (RFC 6749 §4.4): a provider file with `grant = "client_credentials"` signs
/// in as its own client, with the secret in `client_secret_file`, without a person or a browser;
/// a token running out is replaced by the same grant, since there is no refresh token.
extension OAuthEngine {
    /// The client's account: a token from the client credentials grant, the client ID as its
    /// subject and name.
    public func clientCredentials(provider: OAuthProvider, metadata: ServerMetadata) async throws -> AccountRecord {
        guard let path = provider.choices.clientSecretFile else { throw ClientCredentialsError.noSecret(provider: provider.name) }
        let secret = try ClientSecretFile.read(path, provider: provider.name)
        var form = [("grant_type", "client_credentials"), ("client_id", provider.clientID), ("client_secret", secret.exposedValue)]
        let scopes = provider.scopes.filter { $0 != "openid" }
        if !scopes.isEmpty { form.append(("scope", scopes.joined(separator: " "))) }
        let tokens = try await tokenRequest(metadata.tokenEndpoint, form)
        let time = now()
        return AccountRecord(
            provider: provider.name, issuer: provider.issuer ?? metadata.tokenEndpoint.absoluteString, subject: provider.clientID,
            displayName: provider.clientID, accessToken: tokens.accessToken, tokenType: tokens.tokenType, refreshToken: nil,
            idToken: nil, expiresAt: tokens.expiresIn.map { time.addingTimeInterval(TimeInterval($0)) },
            scopes: tokens.scope.map { $0.split(separator: " ").map(String.init) } ?? scopes, createdAt: time, updatedAt: time)
    }
}

extension Provider {
    /// The OAuth view of a provider whose file says `grant = "client_credentials"`; `nil` for others.
    public var machineIdentity: OAuthProvider? {
        switch kind {
        case .oidc(let client), .oauth2(let client):
            return client.choices.grant == .clientCredentials ? OAuthProvider(self, client: client) : nil
        case .firebase: return nil
        }
    }
}

/// `client_secret_file`: read when a token is needed, and only when no one else can read it.
enum ClientSecretFile {
    static func read(_ path: String, provider: String) throws(ClientCredentialsError) -> Secret {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .unreadable(provider: provider, path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            throw .unreadable(
                provider: provider, path: path,
                reason:
                    "other users can read it, or it is not yours (mode \(String(info.st_mode & 0o777, radix: 8))); run `chmod 600 \(path)`")
        }
        guard let data = FileManager.default.contents(atPath: path), var text = String(data: data, encoding: .utf8) else {
            throw .unreadable(provider: provider, path: path, reason: "it cannot be read as UTF-8 text")
        }
        if text.hasSuffix("\n") || text.hasSuffix("\r\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else { throw .unreadable(provider: provider, path: path, reason: "it is empty") }
        return Secret(text)
    }
}

/// Why a machine identity cannot get a token.
public enum ClientCredentialsError: LatchkeyError, Equatable {
    case noSecret(provider: String)
    case unreadable(provider: String, path: String, reason: String)

    public var category: FailureCategory { .configuration }

    public var description: String {
        switch self {
        case .noSecret(let provider):
            return "\(provider): grant = \"client_credentials\" needs client_secret_file in the provider file"
        case .unreadable(let provider, let path, let reason):
            return "\(provider): client_secret_file \(TerminalText.sanitized(path, maxLength: 200)) cannot be used: \(reason)"
        }
    }
}
