public import Foundation
import LatchkeyVault
public import LatchkeyAccounts
public import LatchkeyCredentialHelpers
import LatchkeyProviders

extension AccountService {
    /// What a container credential helper answers to `get`: the mapped provider's
    /// `registry_username` and a valid access token of its account (the one config.toml maps to
    /// the working directory, else its only or default one), refreshed first when needed; `nil`
    /// when no provider maps the server (see `RegistryServerURL.provider(in:)`).
    ///
    /// `interaction` signs the account in again when only that can give a token (see
    /// `validRecord(for:minimumLifetime:signingInWith:)`); the client owns stdin and stdout.
    public func registryCredential(
        for server: RegistryServerURL, minimumLifetime: TimeInterval, signingInWith interaction: (any SignInInteraction)? = nil
    ) async throws -> RegistryCredential? {
        guard let provider = try server.provider(in: catalog.providers) else { return nil }
        let record = try await validRecord(
            for: AccountSelector(provider: provider.name), minimumLifetime: minimumLifetime, signingInWith: interaction)
        return RegistryCredential(serverURL: server.text, username: provider.registryUsername, secret: record.accessToken)
    }
}
