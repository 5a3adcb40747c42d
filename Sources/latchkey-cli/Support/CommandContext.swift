import ArgumentParser
import Foundation
import LatchkeyCore

/// What every command needs, built from the process environment.
struct CommandContext {
    let environment: [String: String]
    let catalog: ProviderCatalog
    /// config.toml, or the errors that make it unusable.
    let configuration: Result<LatchkeyConfiguration, ProviderFileErrors>
    let keystore: any Keystore

    /// `backend` overrides config.toml (`--keystore`); `passphrase` overrides where a vault
    /// passphrase comes from (the screen asks in its own prompt).
    init(
        environment: [String: String] = ProcessInfo.processInfo.environment, backend: LatchkeyConfiguration.KeystoreBackend? = nil,
        passphrase: (any PassphraseProvider)? = nil
    ) {
        self.environment = environment
        let directories = ProviderCatalog.searchDirectories(environment: environment)
        catalog = ProviderCatalog.load(directories: directories, explicitDirectoryRequired: environment["LATCHKEY_PROVIDERS_DIR"] != nil)
        let paths = LatchkeyPaths(environment: environment)
        configuration = Result { () throws(ProviderFileErrors) in try LatchkeyConfiguration.load(path: paths.configFile) }
        switch configuration {
        case .failure(let errors):
            keystore = UnusableKeystore(errors: errors)
        case .success(let settings):
            switch backend ?? settings.keystore {
            case .vault:
                let source =
                    passphrase ?? environment["LATCHKEY_PASSPHRASE_FILE"].map { PassphraseFile(path: $0) } ?? TerminalPassphrasePrompt()
                keystore = VaultKeystore(
                    path: paths.vaultFile, passphrase: source, cacheKey: true, unlockDuration: TimeInterval(settings.unlockTimeout))
            case .secretService:
                keystore = VaultKeystore.secretService(path: paths.secretServiceVaultFile)
            }
        }
    }

    var service: AccountService {
        AccountService(catalog: catalog, keystore: keystore, engine: SignInEngine(transport: LiveHTTPTransport()))
    }
}

/// `--keystore`, on every command that touches accounts.
struct KeystoreOptions: ParsableArguments {
    @Option(
        help: "The keystore: vault (encrypted file, the default) or secret-service (desktop keyring); overrides config.toml.",
        transform: { text in
            guard let backend = LatchkeyConfiguration.KeystoreBackend(rawValue: text) else {
                throw ValidationError("--keystore must be vault or secret-service")
            }
            return backend
        })
    var keystore: LatchkeyConfiguration.KeystoreBackend?

    func context(passphrase: (any PassphraseProvider)? = nil) -> CommandContext {
        CommandContext(backend: keystore, passphrase: passphrase)
    }
}

/// Stands in for the keystore when config.toml is broken: every use reports the file's errors,
/// so no command silently falls back to another keystore.
struct UnusableKeystore: Keystore {
    let errors: ProviderFileErrors
    var backendName: String { "unusable" }

    func records() async throws(KeystoreError) -> [AccountRecord] { throw error }

    func update<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result {
        throw error
    }

    private var error: KeystoreError {
        .configuration(errors.errors.map(\.description).joined(separator: "\n"))
    }
}
