import Foundation
public import LatchkeyAccounts
import LatchkeyEssentials
public import LatchkeyKeystore
import LatchkeyOAuth
public import LatchkeyProviders
public import LatchkeySupport
import LatchkeyVault

/// Every part Latchkey runs with, built once from the process environment: the one composition
/// root the command line and the screen share, so both read the same providers and config.toml,
/// open the same keystore and sign in through the same seams.
public struct Composition: Sendable {
    public let environment: [String: String]
    /// config.toml, or the errors that make it unusable.
    public let configuration: Result<LatchkeyConfiguration, ProviderFileErrors>
    public let keystore: any Keystore
    public let service: AccountService
    /// Which accounts need a person's approval before a token leaves; `nil` when config.toml is unusable.
    let releasePolicy: ReleasePolicy?

    /// `backend` overrides config.toml (`--keystore`). The vault's passphrase comes from
    /// `LATCHKEY_PASSPHRASE_FILE` when set, else from `passphrase` (a terminal prompt, the screen's).
    /// `workingDirectory` is where the command runs, for config.toml's directory mappings;
    /// `warn` says a mapping that could not be followed.
    public init(
        environment: [String: String], backend: LatchkeyConfiguration.KeystoreBackend? = nil, passphrase: any PassphraseProvider,
        transport: any HTTPTransport = LiveHTTPTransport(), workingDirectory: String? = nil,
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.environment = environment
        let paths = LatchkeyPaths(environment: environment)
        configuration = Result { () throws(ProviderFileErrors) in
            try LatchkeyConfiguration.load(path: paths.configFile, environment: environment)
        }
        let providers = LazyProviderCatalog { Composition.loadCatalog(environment: environment) }
        let log = (file: ReleaseLog(path: ReleaseLog.defaultPath(environment: environment)), warn: warn)
        let releasePolicy = (try? configuration.get()).map { ReleasePolicy(configuration: $0, providers: providers, log: log) }
        self.releasePolicy = releasePolicy
        switch configuration {
        case .failure(let errors):
            keystore = UnusableKeystore(errors: errors)
        case .success(let settings):
            // config.toml moved away from the openbao keystore: its copies go, as the vault's do below.
            if backend == nil, settings.keystore != .openBao {
                LauncherCopies(origin: .openBao(journal: paths.openBaoJournal), releasePolicy: nil, directories: nil).lock()
            }
            switch backend ?? settings.keystore {
            case .vault:
                let source: any PassphraseProvider = environment["LATCHKEY_PASSPHRASE_FILE"].map { PassphraseFile(path: $0) } ?? passphrase
                keystore = VaultKeystore(
                    path: paths.vaultFile, passphrase: source, cacheKey: true, unlockDuration: TimeInterval(settings.unlockTimeout),
                    directories: settings.sourceIdentity.map { ($0, settings.directories) }, releasePolicy: releasePolicy)
            case .secretService:
                keystore = VaultKeystore.secretService(path: paths.secretServiceVaultFile)
                // config.toml moved away from the passphrase vault: its cached key and token copies
                // go, or the launcher would go on answering from a keystore no longer in use.
                if backend == nil { VaultKeystore(path: paths.vaultFile, passphrase: passphrase, cacheKey: true).lock() }
            case .openBao:
                if let openBao = settings.openBao {
                    // The launcher's copies only when config.toml chooses this keystore: the
                    // launcher answers only what config.toml's keystore holds.
                    let copies =
                        (backend ?? settings.keystore) == settings.keystore
                        ? LauncherCopies(
                            origin: .openBao(journal: paths.openBaoJournal), releasePolicy: releasePolicy,
                            directories: settings.sourceIdentity.map { ($0, settings.directories) })
                        : nil
                    keystore = OpenBaoKeystore(
                        settings: openBao, transport: transport, environment: environment, journalPath: paths.openBaoJournal,
                        launcherCopies: copies)
                } else {
                    keystore = UnusableKeystore(
                        errors: ProviderFileErrors([
                            ProviderFileError(
                                file: paths.configFile, field: "keystore",
                                message: "openbao needs an [openbao] table with addresses and path (see latchkey(1))")
                        ]))
                }
                // As for the Secret Service: the launcher must not go on answering from the vault's copies.
                if backend == nil { VaultKeystore(path: paths.vaultFile, passphrase: passphrase, cacheKey: true).lock() }
            }
        }
        var here: WorkingDirectory?
        if let workingDirectory, case .success(let settings) = configuration, !settings.directories.mappings.isEmpty {
            here = WorkingDirectory(path: workingDirectory, accounts: settings.directories, configFile: paths.configFile, warn: warn)
        }
        service = AccountService(
            providers: providers, keystore: keystore,
            engine: OAuthEngine(transport: transport, memory: ServerMemoryDirectory(environment: environment)),
            browser: BrowserLauncher(environment: environment), listeners: LoopbackListenerFactory(), here: here,
            hooks: (try? configuration.get()).map { Hooks(settings: $0.hooks, environment: environment, report: warn) },
            releasePolicy: releasePolicy)
    }

    /// The parts as they are given: for a test that runs the agent over a keystore in memory and a
    /// scripted authorization server, with providers.d and config.toml read from `environment` as
    /// the agent reads them.
    init(environment: [String: String], configuration: LatchkeyConfiguration, keystore: any Keystore, service: AccountService) {
        self.environment = environment
        self.configuration = .success(configuration)
        self.keystore = keystore
        self.service = service
        releasePolicy = nil
    }

    /// Every provider in the providers.d directories, read when first asked for.
    public var catalog: ProviderCatalog { service.catalog }

    /// Every provider in the providers.d directories `environment` names (the agent reads them
    /// again when they change), with `sources`, the policy files as they were before they were
    /// read (taken now unless the caller took it before reading config.toml).
    static func loadCatalog(environment: [String: String], sources: PolicySnapshot? = nil) -> ProviderCatalog {
        let sources = sources ?? PolicySnapshot { environment[$0] }
        var catalog = ProviderCatalog.load(
            directories: sources.directories, explicitDirectoryRequired: environment["LATCHKEY_PROVIDERS_DIR"] != nil)
        catalog.sources = sources
        return catalog
    }
}

/// Stands in for the keystore when config.toml is broken: every use reports the file's errors,
/// so no command silently falls back to another keystore.
struct UnusableKeystore: Keystore {
    let errors: ProviderFileErrors
    var backendName: String { "unusable" }
    var location: String { "unusable" }
    var freshness: RecordsFreshness { .forSeconds(0) }
    var launcherWindow: LauncherWindow { .none(reason: error.description) }

    func unlock(for duration: TimeInterval) async throws -> Date { throw error }

    @discardableResult
    func lock() -> Bool { false }

    func keepAnswerForLauncher(_ text: [UInt8], key: (_ location: String) -> String, of record: AccountRecord, until: Date) {}

    func findings(environment: [String: String]) -> [Finding] {
        [Finding(.problem, "keystore", "none can be chosen while config.toml has errors", fix: "fix config.toml first")]
    }

    func records() async throws(KeystoreError) -> [AccountRecord] { throw error }

    func update<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result {
        throw error
    }

    func updateAccount<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)?, _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result {
        throw error
    }

    func registeredClients() async throws(KeystoreError) -> [RegisteredClient] { throw error }

    func updateRegisteredClients<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [RegisteredClient]) async throws -> Result
    ) async throws -> Result {
        throw error
    }

    private var error: KeystoreError {
        .configuration(errors.errors.map(\.description).joined(separator: "\n"))
    }
}
