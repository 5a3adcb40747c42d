public import LatchkeyEssentials
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
    /// Whose token copies answer here: the keystore the full command last ran with under
    /// config.toml as it is now.
    public let origin: CopiesOrigin

    /// The mappings in force for the keystore of `lookup`'s environment (the first of
    /// `CopiesOrigin.candidates` whose copy of them was made under config.toml as it is now), or
    /// `nil` when the launcher cannot know them (config.toml changed since the full command last
    /// copied them): the launcher then answers nothing, and the full command does.
    public static func current(_ lookup: (String) -> String?) -> LauncherDirectory? {
        let configFile = XDGDirectories.config(lookup) + "/config.toml"
        for origin in CopiesOrigin.candidates(lookup) {
            guard let mappings = DirectoryAccountsCopy.current(vaultPath: origin.location, configFile: configFile) else { continue }
            guard !mappings.isEmpty else { return LauncherDirectory(mappings: [], path: "", origin: origin) }
            guard let path = PhysicalDirectory.current() else { return nil }
            return LauncherDirectory(mappings: mappings, path: path, origin: origin)
        }
        return nil
    }

    /// `request` as this directory means it: a bare provider's token is the mapped account's.
    public func applying(to request: LauncherRequest) -> LauncherRequest {
        switch request {
        case .token(let selector, let minimumLifetime, let narrowing):
            return .token(applying(to: selector), minimumLifetime: minimumLifetime, narrowing: narrowing)
        case .mcpHeaders(let selector):
            return .mcpHeaders(applying(to: selector))
        case .awsCredential(let selector, let options, let minimumLifetime):
            return .awsCredential(applying(to: selector), options: options, minimumLifetime: minimumLifetime)
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
