import LatchkeyEssentials
import LatchkeySupport

extension LatchkeyConfiguration {
    /// The 1-based line of config.toml at `path` that sets `keystore`; `nil` when the file does
    /// not exist or sets none. `keystore migrate` names it, so the person knows which line to change.
    public static func keystoreLine(inFileAt path: String) -> Int? {
        guard case .success(let text) = TextFile.read(path) else { return nil }
        return ProviderFileParser.Context(file: path, text: text).line(of: "keystore")
    }
}
