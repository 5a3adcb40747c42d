import LatchkeyEssentials
import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// Where the launcher runs, with the accounts config.toml maps there, known without reading
/// config.toml (see `DirectoryAccountsCopy`): what a bare `PROVIDER` means for its answers.
public struct LauncherDirectory: Sendable {
    /// The copy's `PATH\tPROVIDER\tACCOUNT` lines (`DirectoryAccounts.launcherCopy`); empty when
    /// nothing is mapped.
    private let mappings: [UInt8]
    /// The physical working directory; empty when nothing is mapped (it is then never asked for).
    public let path: String

    /// The mappings in force for the vault of `lookup`'s environment, or `nil` when the launcher
    /// cannot know them (config.toml changed since the full command last copied them): the launcher
    /// then answers nothing, and the full command does.
    public static func current(_ lookup: (String) -> String?) -> LauncherDirectory? {
        let vault = VaultFile.defaultPath(lookup)
        let configFile = XDGDirectories.config(lookup) + "/config.toml"
        guard let mappings = DirectoryAccountsCopy.current(vaultPath: vault, configFile: configFile) else { return nil }
        guard !mappings.isEmpty else { return LauncherDirectory(mappings: [], path: "") }
        guard let path = PhysicalDirectory.current() else { return nil }
        return LauncherDirectory(mappings: mappings, path: path)
    }

    /// `request` as this directory means it: a bare provider's token is the mapped account's.
    public func applying(to request: LauncherRequest) -> LauncherRequest {
        switch request {
        case .token(let selector, let minimumLifetime, let narrowing):
            return .token(applying(to: selector), minimumLifetime: minimumLifetime, narrowing: narrowing)
        case .mcpHeaders(let selector):
            return .mcpHeaders(applying(to: selector))
        case .awsCredential(let selector, let options):
            return .awsCredential(applying(to: selector), options: options)
        case .statusJSON:
            return request
        }
    }

    private func applying(to selector: AccountSelector) -> AccountSelector {
        guard selector.account == nil, !mappings.isEmpty,
            let account = DirectoryAccounts.account(for: selector.provider, in: path, launcherCopy: mappings)
        else { return selector }
        return AccountSelector(provider: selector.provider, account: account)
    }

    /// For `status --json`'s mark, when anything is mapped.
    var here: (accounts: DirectoryAccounts, path: String)? {
        mappings.isEmpty ? nil : (DirectoryAccounts(launcherCopy: String(decoding: mappings, as: UTF8.self)), path)
    }
}
