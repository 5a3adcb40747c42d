/// Where a client finds `latchkey agent`, computed without Foundation so the launcher can ask the
/// agent before anything heavy is loaded.
public enum AgentSocket {
    /// The variable naming the agent's socket: on a host reached with `ssh -R`, the forwarded one.
    public static let variable = "LATCHKEY_AGENT"

    /// Which socket to ask, and whether the person named it.
    public struct Endpoint: Equatable, Sendable {
        public var path: String
        /// `LATCHKEY_AGENT` named it: an agent that does not answer there is an error. The default
        /// socket is only tried, and a command goes on as without an agent when nothing answers.
        public var isExplicit: Bool

        public init(path: String, isExplicit: Bool) {
            self.path = path
            self.isExplicit = isExplicit
        }
    }

    /// `$LATCHKEY_AGENT` when set and not empty, else the default socket; `nil` when there is
    /// neither (no `XDG_RUNTIME_DIR`).
    public static func endpoint(_ lookup: (String) -> String?) -> Endpoint? {
        if let named = lookup(variable), !named.isEmpty { return Endpoint(path: named, isExplicit: true) }
        return defaultPath(lookup).map { Endpoint(path: $0, isExplicit: false) }
    }

    /// `$XDG_RUNTIME_DIR/latchkey`: the agent's private directory (0700), which the runtime
    /// directory's own rules (the user's, 0700, emptied at logout) make the right home for a socket.
    public static func directory(_ lookup: (String) -> String?) -> String? {
        guard let runtime = lookup("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
        return (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/latchkey"
    }

    /// `$XDG_RUNTIME_DIR/latchkey/agent.sock`, the local socket.
    public static func defaultPath(_ lookup: (String) -> String?) -> String? {
        directory(lookup).map { $0 + "/agent.sock" }
    }
}
