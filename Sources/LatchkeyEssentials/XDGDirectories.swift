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

    /// `$XDG_DATA_DIRS`, each followed by `/latchkey` (default `/usr/local/share` then `/usr/share`):
    /// the system's read-only data, searched after `data`.
    public static func dataDirectories(_ lookup: (String) -> String?) -> [String] {
        let listed = (lookup("XDG_DATA_DIRS") ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return (listed.isEmpty ? ["/usr/local/share", "/usr/share"] : listed).map { $0 + "/latchkey" }
    }

    /// The specification ignores relative values, so do we.
    private static func base(_ variable: String, fallback: String, _ lookup: (String) -> String?) -> String {
        if let value = lookup(variable), value.hasPrefix("/") { return value }
        return (lookup("HOME") ?? "/") + fallback
    }
}
