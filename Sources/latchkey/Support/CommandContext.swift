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
        let passphrase: any PassphraseProvider =
            environment["LATCHKEY_PASSPHRASE_FILE"].map { PassphraseFile(path: $0) } ?? TerminalPassphrasePrompt()
        keystore = VaultKeystore(path: LatchkeyPaths(environment: environment).vaultFile, passphrase: passphrase)
    }

    var service: AccountService {
        AccountService(catalog: catalog, keystore: keystore, engine: SignInEngine(transport: LiveHTTPTransport()))
    }
}
