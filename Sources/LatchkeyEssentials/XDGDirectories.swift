/// Latchkey's directories under the XDG base directory specification, computed without
/// Foundation so the token fast path can find its way before anything heavy is loaded.
public enum XDGDirectories {
    /// `$XDG_CONFIG_HOME/latchkey` (default `~/.config/latchkey`).
    public static func config(_ lookup: (String) -> String?) -> String {
        base("XDG_CONFIG_HOME", fallback: "/.config", lookup) + "/latchkey"
    }

    /// `$XDG_DATA_HOME/latchkey` (default `~/.local/share/latchkey`).
    public static func data(_ lookup: (String) -> String?) -> String {
        base("XDG_DATA_HOME", fallback: "/.local/share", lookup) + "/latchkey"
    }

    /// The specification ignores relative values, so do we.
    private static func base(_ variable: String, fallback: String, _ lookup: (String) -> String?) -> String {
        if let value = lookup(variable), value.hasPrefix("/") { return value }
        return (lookup("HOME") ?? "/") + fallback
    }
}
