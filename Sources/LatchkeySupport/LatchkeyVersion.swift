/// The version printed by `latchkey --version` and sent in User-Agent headers.
public enum LatchkeyVersion {
    public static let current = "0.1.0"
}
