import Foundation
import LatchkeyEssentials
import LatchkeyKeystore
public import LatchkeyOAuth
import LatchkeyProviders
import LatchkeyVault

/// The client Latchkey registers for itself (`registration = "dynamic"`, RFC 7591): registered at
/// the first sign-in, kept in the vault per provider, reused by every account of the provider
/// and deleted with `providers remove` (RFC 7592).
extension AccountService {
    /// The client registered at `provider`: the vault's, unless it was registered at another
    /// server or for other redirect URIs, or was kept before the device grant was asked for and a
    /// device sign-in (`forDevice`) now needs it, else a new registration, checked and stored
    /// before the person signs in. Under the vault's lock, so two first sign-ins at once register
    /// once.
    func registeredClient(
        for provider: OAuthProvider, metadata: ServerMetadata, forDevice: Bool, interaction: any SignInInteraction
    ) async throws -> RegisteredClient {
        let redirectURIs = provider.registeredRedirectURIs
        let engine = self.engine
        let (client, replaced) = try await keystore.updateRegisteredClients { clients -> (RegisteredClient, RegisteredClient?) in
            let existing = clients.first { $0.provider == provider.name }
            if let existing, existing.registrationEndpoint == metadata.registrationEndpoint?.absoluteString,
                existing.redirectURIs == redirectURIs,
                !(forDevice && existing.grantsDeviceCode == nil && metadata.deviceAuthorizationEndpoint != nil)
            {
                return (existing, nil)
            }
            let registration = try await engine.register(provider: provider, metadata: metadata, redirectURIs: redirectURIs)
            if let correction = registration.correction {
                await interaction.clientRegistrationCorrected(at: provider, problem: correction)
            }
            clients.removeAll { $0.provider == provider.name }
            clients.append(registration.client)
            return (registration.client, existing)
        }
        // The registration it replaces is of no more use to anyone; a server that will not
        // delete it leaves it behind, as it would have been without this.
        if let replaced { _ = try? await engine.deleteRegistration(replaced) }
        return client
    }

    /// `provider` as the engine uses it: with the client ID registered for it when it has none
    /// of its own (`registration = "dynamic"`).
    func withClientID(_ provider: OAuthProvider) async throws -> OAuthProvider {
        guard provider.choices.registration == .dynamic else { return provider }
        guard let registered = try await keystore.registeredClient(for: provider.name) else {
            throw ClientRegistrationError.notRegistered(provider: provider.name)
        }
        var resolved = provider
        resolved.client.clientID = registered.clientID
        return resolved
    }

    /// Deletes the client registered for the provider `name` at its server (RFC 7592 §2.3) and
    /// forgets it; `nil` when none was registered. The vault forgets it whatever the server
    /// answered, after the answer: a failed deletion is reported, not retried.
    func removeRegisteredClient(of name: String) async throws -> Result<OAuthEngine.RegistrationDeletion, any Error>? {
        let engine = self.engine
        return try await keystore.updateRegisteredClients { clients -> Result<OAuthEngine.RegistrationDeletion, any Error>? in
            guard let index = clients.firstIndex(where: { $0.provider == name }) else { return nil }
            let outcome: Result<OAuthEngine.RegistrationDeletion, any Error>
            do {
                outcome = .success(try await engine.deleteRegistration(clients[index]))
            } catch {
                outcome = .failure(error)
            }
            clients.remove(at: index)
            return outcome
        }
    }
}

extension AccountService {
    /// What `providers remove` did: the file deleted, and what came of deleting the client
    /// Latchkey registered there (`nil` when it registered none).
    public struct ProviderRemoval: Sendable {
        public var file: String
        public var registration: Result<OAuthEngine.RegistrationDeletion, any Error>?
    }

    /// Removes the provider `name`'s file from `directory` (the person's own providers.d) after
    /// deleting the client Latchkey registered for it (RFC 7592). Refused while accounts of the
    /// provider are signed in, or when the file is elsewhere.
    public func removeProvider(named name: String, from directory: String) async throws -> ProviderRemoval {
        let file = directory + "/" + name + ".toml"
        guard Provider.isValidName(name), FileManager.default.fileExists(atPath: file) else {
            if let elsewhere = catalog.providers.first(where: { $0.name == name }) {
                throw ProviderRemovalError.notInOwnDirectory(file: elsewhere.sourceFile, directory: directory)
            }
            throw ProviderLookupError.unknown(name: name, known: catalog.providers.map(\.name))
        }
        let accounts = try await keystore.records().filter { $0.provider == name }
        guard accounts.isEmpty else {
            throw ProviderRemovalError.accountsSignedIn(provider: name, accounts: accounts.map { TerminalText.sanitized($0.label) })
        }
        let registration = try await removeRegisteredClient(of: name)
        guard unlink(file) == 0 else {
            throw ProviderRemovalError.cannotDelete(file: file, reason: String(cString: strerror(errno)))
        }
        return ProviderRemoval(file: file, registration: registration)
    }
}
