/// Whose kernel-keyring token copies (`TokenCopy`) the launcher answers from: the vault's, or
/// the `openbao` keystore's, which keeps no vault file on the machine.
///
/// The launcher cannot read config.toml (too slow to load), so it finds the origin from the
/// environment alone: each candidate's copy of config.toml's directory mappings
/// (`DirectoryAccountsCopy`) names the identity of the config.toml it was made under, and only
/// the full command running with that very file chose the keystore, so at most one candidate
/// matches config.toml as it is now.
public enum CopiesOrigin: Equatable, Sendable {
    /// The vault at this path (the passphrase keystore: the Secret Service's keeps no copies).
    case vault(String)
    /// The `openbao` keystore: its copies are named after its journal's path, the one file it
    /// may keep on the machine (see `LatchkeyPaths.openBaoJournal`).
    case openBao(journal: String)

    /// The origins the environment `lookup` reads can have, the vault's first (so a vault user's
    /// launcher does exactly what it did before the openbao keystore had copies).
    public static func candidates(_ lookup: (String) -> String?) -> [CopiesOrigin] {
        [.vault(VaultFile.defaultPath(lookup)), .openBao(journal: openBaoJournal(dataDirectory: XDGDirectories.data(lookup)))]
    }

    /// `DATA/latchkey/openbao.journal`: the `openbao` keystore's records OpenBao has not taken yet.
    public static func openBaoJournal(dataDirectory: String) -> String { dataDirectory + "/openbao.journal" }

    /// The path the copies' keys are named with (`TokenCopy`'s `vaultPath`).
    public var location: String {
        switch self {
        case .vault(let path): return path
        case .openBao(let journal): return journal
        }
    }

    /// Whether what the full command checks on disk before it reads any record still passes, so
    /// that no answer from the keyring bypasses the full command's refusal: the vault is there and
    /// passes `VaultFile.check`; the openbao journal, which the full command reads (with the same
    /// checks) before it asks OpenBao for anything, passes them when it is there, and its
    /// directory always.
    public var passesCheck: Bool {
        switch self {
        case .vault(let path):
            guard case .success(true) = VaultFile.check(path) else { return false }
            return true
        case .openBao(let journal):
            guard case .success = VaultFile.check(journal) else { return false }
            return true
        }
    }
}
