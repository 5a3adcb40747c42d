import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault
import TOMLKit

/// `$XDG_CONFIG_HOME/latchkey/config.toml`: settings that are not about one provider.
public struct LatchkeyConfiguration: Sendable, Equatable {
    /// Which keystore holds the accounts.
    public enum KeystoreBackend: String, Sendable, CaseIterable {
        /// The encrypted vault file (the default; any machine, no daemon).
        case vault
        /// The vault file with its key kept by the desktop Secret Service instead of a passphrase.
        case secretService = "secret-service"
        /// A team's accounts in OpenBao (`[openbao]`), shared by many machines.
        case openBao = "openbao"
    }

    public var keystore: KeystoreBackend = .vault
    /// How long an unlock lasts in the kernel keyring, in seconds; 0 asks every time.
    public var unlockTimeout: Int = 900
    /// `[directories."PATH"]`: the account a bare provider name means in and below a directory.
    public var directories = DirectoryAccounts()
    /// `[accounts."PROVIDER:ACCOUNT"]`: what the agent may do with each account's tokens.
    public var accounts: [AccountSettings] = []
    /// `[agent]`: the agent's own settings.
    public var agent = AgentSettings()
    /// `[hooks]`: programs run on sign-ins, failed refreshes, expiry and releases.
    public var hooks = HookSettings()
    /// `[openbao]`: the OpenBao cluster that keeps the accounts when `keystore = "openbao"`.
    public var openBao: OpenBaoSettings?
    /// The identity of the file these settings were read from (`PolicyFiles.identity`;
    /// `PolicyFiles.absent` when there was none), when it had settled and did not change while it
    /// was read: what the launcher's copies (of the mappings, of the tokens) are labelled with,
    /// so the launcher never answers by settings of a file that changed since.
    public var sourceIdentity: String?

    public init() {}

    /// The top-level keys config.toml may hold.
    static let knownKeys = ["keystore", "unlock_timeout", "directories", "accounts", "agent", "hooks", "openbao"]

    /// Reads the file when it exists; a broken file is an error naming file, line and field.
    /// `environment` gives `HOME`, for directories written as `~/…`.
    public static func load(path: String, environment: [String: String] = [:]) throws(ProviderFileErrors) -> LatchkeyConfiguration {
        let before = PolicyFiles.identity(of: path, settled: true)
        let text: String
        var configuration: LatchkeyConfiguration
        switch TextFile.read(path) {
        case .success(let read): text = read
        case .failure(.missing):
            configuration = LatchkeyConfiguration()
            if before == PolicyFiles.absent { configuration.sourceIdentity = before }
            return configuration
        case .failure(let problem): throw ProviderFileErrors([ProviderFileError(file: path, message: problem.message)])
        }
        configuration = try checked(text, path: path, environment: environment)
        if let before, before != PolicyFiles.absent, PolicyFiles.identity(of: path) == before {
            configuration.sourceIdentity = before
        }
        return configuration
    }

    /// `text` read as config.toml at `path` would be: the settings, or every error with its line.
    static func checked(_ text: String, path: String, environment: [String: String]) throws(ProviderFileErrors) -> LatchkeyConfiguration {
        var configuration = LatchkeyConfiguration()
        var reader = ProviderFileParser.Context(file: path, text: text)
        if let problem = TOMLPreflight.problem(in: text) {
            throw ProviderFileErrors([ProviderFileError(file: path, line: problem.line, message: problem.message)])
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch {
            let line = (error as? TOMLParseError)?.source.begin.line
            throw ProviderFileErrors([ProviderFileError(file: path, line: line, message: "not valid TOML")])
        }
        reader.unknownKeys(of: table, known: knownKeys)
        if let backend = reader.choice(table, "keystore", KeystoreBackend.self, required: false) { configuration.keystore = backend }
        if let seconds = reader.wholeNumber(table, "unlock_timeout", in: 0...Int.max, unit: "seconds") {
            configuration.unlockTimeout = seconds
        }
        if let value = table["directories"] {
            configuration.directories = directories(value, reader: &reader, home: environment["HOME"])
        }
        if let value = table["accounts"] { configuration.accounts = accounts(value, reader: &reader) }
        if let value = table["agent"] { configuration.agent = agent(value, reader: &reader) }
        if let value = table["hooks"] { configuration.hooks = hooks(value, reader: &reader) }
        if let value = table["openbao"] { configuration.openBao = OpenBaoSettings.read(value, reader: &reader) }
        guard reader.errors.isEmpty else { throw ProviderFileErrors(reader.errors) }
        return configuration
    }

    /// `[directories."~/work/acme"]` tables of `provider = "account"` strings.
    static func directories(_ value: any TOMLValueConvertible, reader: inout ProviderFileParser.Context, home: String?) -> DirectoryAccounts
    {
        guard let table = value.table else {
            reader.fail("directories", "must be tables such as [directories.\"~/work/acme\"] with github = \"alice@acme.example\"")
            return DirectoryAccounts()
        }
        var mappings: [DirectoryAccounts.Mapping] = []
        // In the order of the file, so errors and warnings come as a person reads it.
        let ordered = table.keys.map { ($0, reader.headerLine(containing: $0)) }.sorted { ($0.1 ?? .max, $0.0) < ($1.1 ?? .max, $1.0) }
        for (written, line) in ordered {
            guard let accounts = table[written]?.table else {
                reader.fail(
                    "directories", "\"\(TerminalText.sanitized(written, maxLength: 200))\" must be a table of provider = \"account\"",
                    line: line)
                continue
            }
            guard let path = expanded(written, home: home) else {
                reader.fail(
                    "directories", "\"\(TerminalText.sanitized(written, maxLength: 200))\" must be an absolute path or start with ~/",
                    line: line)
                continue
            }
            var names: [String: String] = [:]
            for provider in accounts.keys.sorted() {
                guard Provider.isValidName(provider), let account = accounts[provider]?.string, !account.isEmpty,
                    !account.contains(where: { $0.isNewline || $0 == "\t" })
                else {
                    reader.fail(
                        "directories",
                        "\(TerminalText.sanitized(provider, maxLength: 80)) must name a provider and be an account name on one line",
                        line: line)
                    continue
                }
                names[provider] = account
            }
            mappings.append(DirectoryAccounts.Mapping(written: written, path: resolved(path), accounts: names, line: line))
        }
        return DirectoryAccounts(mappings)
    }

    /// `~` and `~/…` with `home`, or an absolute path as it is; `nil` for anything else.
    static func expanded(_ path: String, home: String?) -> String? {
        var expanded = path
        if path == "~" || path.hasPrefix("~/") {
            guard let home, home.hasPrefix("/") else { return nil }
            expanded = home + path.dropFirst()
        }
        guard expanded.hasPrefix("/") else { return nil }
        while expanded.count > 1 && expanded.hasSuffix("/") { expanded.removeLast() }
        return expanded
    }

    /// `path` with its symlinks resolved when it exists, so it compares with the physical working
    /// directory getcwd(3) gives; as written when it does not exist (yet).
    static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }
}
