import LatchkeyEssentials
public import LatchkeyVault

/// The directory a command runs in, with the accounts config.toml maps there: what a bare
/// `PROVIDER` means for `token`, `exec`, `git-credential` and the credential helpers.
public struct WorkingDirectory: Sendable {
    /// The physical path (getcwd(3)), symlinks resolved as in the mappings.
    public var path: String
    public var accounts: DirectoryAccounts
    /// config.toml, named in warnings.
    public var configFile: String
    /// Says a mapping that could not be followed (the command goes on without it).
    public var warn: @Sendable (String) -> Void

    public init(path: String, accounts: DirectoryAccounts, configFile: String, warn: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.accounts = accounts
        self.configFile = configFile
        self.warn = warn
    }

    /// `selector` as this directory means it. A mapping naming an account that is not signed in
    /// is said and ignored: the provider's only or default account answers instead, so a stale
    /// line in config.toml never stops a command.
    package func selector(_ selector: AccountSelector, among records: [AccountRecord]) -> AccountSelector {
        let mapped = accounts.applying(to: selector, in: path)
        guard mapped != selector, let mapping = accounts.mapping(for: selector.provider, in: path) else { return selector }
        if (try? mapped.index(in: records)) != nil { return mapped }
        let place = configFile + (mapping.line.map { ":\($0)" } ?? "")
        warn(
            "\(place): [directories.\"\(TerminalText.sanitized(mapping.written, maxLength: 200))\"] maps \(selector.provider) to "
                + "\(TerminalText.sanitized(mapped.account ?? "", maxLength: 100)), who is not signed in there; using \(selector.provider) as if unmapped"
        )
        return selector
    }
}
