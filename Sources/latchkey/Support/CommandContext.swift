import Foundation
import LatchkeyCore

/// What every command needs, built from the process environment.
struct CommandContext {
    let environment: [String: String]
    let catalog: ProviderCatalog
    let keystore: any Keystore

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
        let directories = ProviderCatalog.searchDirectories(environment: environment)
        catalog = ProviderCatalog.load(directories: directories, explicitDirectoryRequired: environment["LATCHKEY_PROVIDERS_DIR"] != nil)
        let paths = LatchkeyPaths(environment: environment)
        let passphrase: any PassphraseProvider =
            environment["LATCHKEY_PASSPHRASE_FILE"].map { PassphraseFile(path: $0) } ?? TerminalPassphrasePrompt()
        configuration = Result { () throws(ProviderFileErrors) in try LatchkeyConfiguration.load(path: paths.configFile) }
        let unlockTimeout = (try? configuration.get())?.unlockTimeout ?? LatchkeyConfiguration().unlockTimeout
        keystore = VaultKeystore(
            path: paths.vaultFile, passphrase: passphrase, cacheKey: true, unlockDuration: TimeInterval(unlockTimeout))
    }

    /// config.toml, or the errors that make it unusable (shown by the commands that need it).
    let configuration: Result<LatchkeyConfiguration, ProviderFileErrors>

    var service: AccountService {
        AccountService(catalog: catalog, keystore: keystore, engine: SignInEngine(transport: LiveHTTPTransport()))
    }
}
