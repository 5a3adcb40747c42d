public import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault

extension OpenBaoSettings {
    /// The token to send to OpenBao: `token_file`'s (checked as every secret file is: the
    /// owner's, a regular file, no access for others), an AppRole login's, or the environment's.
    /// What config.toml names comes first: a shell's `BAO_TOKEN` may be for other work.
    public func token(environment: [String: String], client: OpenBaoClient) async throws(OpenBaoError) -> Secret {
        switch login {
        case .tokenFile(let path):
            return try Self.secret(in: path, key: "token_file")
        case .appRole(let roleID, let path):
            return try await client.login(roleID: roleID, secretID: try Self.secret(in: path, key: "approle_secret_id_file"))
        case .environment:
            guard
                let (name, token) = ["BAO_TOKEN", "VAULT_TOKEN"].lazy.compactMap({ name in environment[name].map { (name, $0) } })
                    .first(where: { !$0.1.isEmpty })
            else { throw .noCredential }
            guard TokenText.isValid(token) else { throw .unusableToken(variable: name) }
            return Secret(token)
        }
    }

    /// A token or secret ID from its file: visible ASCII, as it goes into a header or JSON.
    private static func secret(in path: String, key: String) throws(OpenBaoError) -> Secret {
        let secret: Secret
        do {
            secret = try SecretFile.read(path)
        } catch {
            throw .unusableFile(path: path, key: key, reason: error.reason)
        }
        guard TokenText.isValid(secret.exposedValue) else {
            throw .unusableFile(path: path, key: key, reason: "it holds characters no token has (spaces or control characters)")
        }
        return secret
    }
}
