import Foundation
import LatchkeyVault
import TOMLKit

/// `$XDG_CONFIG_HOME/latchkey/config.toml`: settings that are not about one provider.
public struct LatchkeyConfiguration: Sendable, Equatable {
    /// Which keystore holds the accounts.
    public enum KeystoreBackend: String, Sendable, CaseIterable {
        /// The encrypted vault file (the default; any machine, no daemon).
        case vault
        /// The vault file with its key kept by the desktop Secret Service instead of a passphrase.
        case secretService = "secret-service"
    }

    public var keystore: KeystoreBackend = .vault
    /// How long an unlock lasts in the kernel keyring, in seconds; 0 asks every time.
    public var unlockTimeout: Int = 900

    public init() {}

    /// Reads the file when it exists; a broken file is an error naming file, line and field.
    public static func load(path: String) throws(ProviderFileErrors) -> LatchkeyConfiguration {
        var configuration = LatchkeyConfiguration()
        let text: String
        switch TextFile.read(path) {
        case .success(let read): text = read
        case .failure(.missing): return configuration
        case .failure(let problem): throw ProviderFileErrors([ProviderFileError(file: path, message: problem.message)])
        }
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
        for key in table.keys.sorted() where !["keystore", "unlock_timeout"].contains(key) {
            reader.fail(key, "unknown key (known: keystore, unlock_timeout)")
        }
        if let backend = reader.choice(table, "keystore", KeystoreBackend.self, required: false) { configuration.keystore = backend }
        if let value = table["unlock_timeout"] {
            if let seconds = value.int, seconds >= 0 {
                configuration.unlockTimeout = seconds
            } else {
                reader.fail("unlock_timeout", "must be a whole number of seconds, 0 or more")
            }
        }
        guard reader.errors.isEmpty else { throw ProviderFileErrors(reader.errors) }
        return configuration
    }
}
