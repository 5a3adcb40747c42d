import LatchkeyEssentials

/// Where Latchkey keeps its files, following the XDG base directory specification.
public struct LatchkeyPaths: Sendable {
    public var configDirectory: String
    public var dataDirectory: String

    public init(environment: [String: String]) {
        configDirectory = XDGDirectories.config { environment[$0] }
        dataDirectory = XDGDirectories.data { environment[$0] }
    }

    public var vaultFile: String { dataDirectory + "/vault" }
    /// The `secret-service` keystore's vault: a separate file, so switching backends never mixes keys.
    public var secretServiceVaultFile: String { dataDirectory + "/secret-service.vault" }
    /// The `openbao` keystore's records that wait to be written back (`OpenBaoJournal`).
    public var openBaoJournal: String { CopiesOrigin.openBaoJournal(dataDirectory: dataDirectory) }
    public var configFile: String { configDirectory + "/config.toml" }
}
