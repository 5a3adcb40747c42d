import Foundation
import LatchkeyEssentials
import LatchkeyTestSupport
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyProviders
@testable import LatchkeyVault

@Suite("The fast path's token copies", .enabled(if: kernelKeyringWorks))
struct TokenCopiesTests {
    /// The keyring holding a vault's copies; every time the copies are made, it is a new one.
    static func copies(of path: String) -> Int32? {
        KernelKeyring.keyring(description: TokenCopy.keyringDescription(vaultPath: path))
    }

    /// A vault whose key an unlock cached, with a release policy read from no files at all beside
    /// it (copies are made only under a policy whose files' fingerprint is known).
    static func unlockedVault(_ path: String) -> VaultKeystore {
        var configuration = LatchkeyConfiguration()
        configuration.sourceIdentity = PolicyFiles.absent
        let providers = LazyProviderCatalog {
            var catalog = ProviderCatalog(providers: [], errors: [])
            catalog.sources = PolicySnapshot(configFile: path + ".config.toml", directories: [path + ".providers"])
            return catalog
        }
        return VaultKeystore(
            path: path, passphrase: FixedPassphrase(), kdf: VaultKeystoreTests.cheap, keyCache: VaultKeyCache(vaultPath: path),
            unlockDuration: 60, releasePolicy: ReleasePolicy(configuration: configuration, providers: providers))
    }

    @Test("reading the vault file the copies were made from keeps them; a change or a new unlock makes them anew")
    func copiesFollowTheVaultFileAndTheUnlock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/vault"
        let vault = Self.unlockedVault(path)
        defer { vault.lock() }
        let future = Date().addingTimeInterval(3600)
        try await vault.update { records in
            records = [.testing(subject: "1001", displayName: "alice@example.com"), .testing(subject: "1002", displayName: nil)]
            for index in records.indices { records[index].expiresAt = future }
        }
        let made = try #require(Self.copies(of: path))
        #expect(KernelKeyring.read(description: TokenCopy.selectorKeyDescription(vaultPath: path, selector: "google:1002")) != nil)

        // Another process reads the same file under the same unlock: nothing to make again.
        _ = try await Self.unlockedVault(path).records()
        #expect(Self.copies(of: path) == made)

        _ = try await vault.update { records in records.removeLast() }
        let afterChange = try #require(Self.copies(of: path))
        #expect(afterChange != made)
        #expect(KernelKeyring.read(description: TokenCopy.selectorKeyDescription(vaultPath: path, selector: "google:1002")) == nil)

        // A longer unlock outlasts the copies' lifetimes: they are made again to match it.
        _ = try await vault.unlock(for: 120)
        _ = try await Self.unlockedVault(path).records()
        #expect(Self.copies(of: path) != afterChange)
    }

    @Test("a copy the kernel refused is not marked: the next read makes the copies again")
    func anIncompleteSetIsMadeAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/vault"
        let vault = Self.unlockedVault(path)
        defer { vault.lock() }
        try await vault.update { records in
            records = [.testing()]
            records[0].expiresAt = Date().addingTimeInterval(3600)
        }
        // As when the kernel refused keys: the copies exist, their marker does not.
        KernelKeyring.remove(description: TokenCopy.markerKeyDescription(vaultPath: path))
        let made = try #require(Self.copies(of: path))
        _ = try await vault.records()
        #expect(Self.copies(of: path) != made)
    }
}
