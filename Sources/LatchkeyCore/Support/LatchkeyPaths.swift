/// Where Latchkey keeps its files, following the XDG base directory specification.
public struct LatchkeyPaths: Sendable {
    public var configDirectory: String
    public var dataDirectory: String

    public init(environment: [String: String]) {
        let home = environment["HOME"] ?? "/"
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        configDirectory = configHome + "/latchkey"
        dataDirectory = dataHome + "/latchkey"
    }

    public var vaultFile: String { dataDirectory + "/vault" }
    /// The `secret-service` keystore's vault: a separate file, so switching backends never mixes keys.
    public var secretServiceVaultFile: String { dataDirectory + "/secret-service.vault" }
    public var configFile: String { configDirectory + "/config.toml" }
}
