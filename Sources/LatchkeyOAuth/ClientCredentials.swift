import Foundation
import LatchkeyEssentials
public import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault

/// Machine identities (RFC 6749 §4.4): a provider file with `grant = "client_credentials"` signs
/// in as its own client, with the secret in `client_secret_file` or a `private_key_jwt` assertion
/// signed with `private_key_file`, without a person or a browser; a token running out is replaced
/// by the same grant, since there is no refresh token.
extension OAuthEngine {
    /// The client's account: a token from the client credentials grant, the client ID as its
    /// subject and name. When the provider binds tokens (`dpop`), the request carries a DPoP proof
    /// (RFC 9449 §5) made with the machine's key: `existing`'s, the account this grant renews.
    public func clientCredentials(provider: OAuthProvider, metadata: ServerMetadata, replacing existing: AccountRecord? = nil)
        async throws -> AccountRecord
    {
        let scopes = provider.scopes.filter { $0 != "openid" }
        let key = try machineKey(provider, metadata: metadata, existing: existing)
        let tokens = try await clientCredentialsGrant(provider, metadata: metadata, proofKey: key, scopes: scopes)
        let time = now()
        var record = AccountRecord(
            provider: provider.name, issuer: provider.issuer ?? metadata.tokenEndpoint.absoluteString, subject: provider.clientID,
            displayName: provider.clientID, accessToken: tokens.accessToken, tokenType: tokens.tokenType, refreshToken: nil,
            idToken: nil, expiresAt: tokens.expiresIn.map { time.addingTimeInterval(TimeInterval($0)) },
            scopes: tokens.scope.map { $0.split(separator: " ").map(String.init) } ?? scopes, createdAt: time, updatedAt: time)
        // Kept only with a token the server bound: there is no refresh token a proof could have
        // bound, and a bearer token shown as DPoP-bound would be sent with the wrong scheme.
        if tokens.tokenType.lowercased() == "dpop" { record.dpopKey = key?.stored }
        return record
    }

    /// The grant's answer (RFC 6749 §4.4.2) for `scopes` and, narrowed, one `resource` (RFC 8707
    /// §2): a machine identity has no refresh token, so a token for another resource or fewer
    /// scopes is a grant of its own.
    func clientCredentialsGrant(
        _ provider: OAuthProvider, metadata: ServerMetadata, proofKey: DPoPKey?, scopes: [String], resource: String? = nil
    ) async throws -> TokenResponse {
        // Built for each request sent: a client assertion is single-use, so a DPoP nonce retry signs a new one.
        try await tokenRequest(metadata.tokenEndpoint, proofKey: proofKey) {
            var form = [("grant_type", "client_credentials")]
            form += try machineAuthentication(provider, tokenEndpoint: metadata.tokenEndpoint)
            if !scopes.isEmpty { form.append(("scope", scopes.joined(separator: " "))) }
            if let resource { form.append(("resource", resource)) }
            return form
        }
    }

    /// The machine's DPoP key when the provider binds tokens (`dpop`, as for a person's sign-in):
    /// the one its account already holds, so the key stays the same from grant to grant, else a
    /// new one.
    private func machineKey(_ provider: OAuthProvider, metadata: ServerMetadata, existing: AccountRecord?) throws -> DPoPKey? {
        guard try provider.choices.bindsTokens(metadata, provider: provider.name) else { return nil }
        if let stored = existing?.dpopKey { return try DPoPKey(stored: stored) }
        return DPoPKey()
    }

    /// The client's authentication fields, from its files read now (a rotated secret or key needs
    /// no restart): `client_secret` (client_secret_post), or a new assertion for this request.
    private func machineAuthentication(_ provider: OAuthProvider, tokenEndpoint: URL) throws -> [(String, String)] {
        let choices = provider.choices
        if let path = choices.privateKeyFile {
            do {
                let key = try ClientAssertion(pem: try SecretFile.read(path), keyID: choices.privateKeyID)
                return key.form(clientID: provider.clientID, audience: tokenEndpoint, at: now())
            } catch {
                throw ClientCredentialsError.unreadable(provider: provider.name, key: "private_key_file", path: path, reason: error.reason)
            }
        }
        guard let path = choices.clientSecretFile else { throw ClientCredentialsError.noSecret(provider: provider.name) }
        do {
            return [("client_id", provider.clientID), ("client_secret", try SecretFile.read(path).exposedValue)]
        } catch {
            throw ClientCredentialsError.unreadable(provider: provider.name, key: "client_secret_file", path: path, reason: error.reason)
        }
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

/// Why a machine identity cannot get a token.
public enum ClientCredentialsError: LatchkeyError, Equatable {
    case noSecret(provider: String)
    case unreadable(provider: String, key: String, path: String, reason: String)

    public var category: FailureCategory { .configuration }

    public var description: String {
        switch self {
        case .noSecret(let provider):
            return "\(provider): grant = \"client_credentials\" needs client_secret_file or private_key_file in the provider file"
        case .unreadable(let provider, let key, let path, let reason):
            return "\(provider): \(key) \(TerminalText.sanitized(path, maxLength: 200)) cannot be used: \(reason)"
        }
    }
}
