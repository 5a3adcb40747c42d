import LatchkeyEssentials

#if canImport(Glibc)
    import Glibc
#endif

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

    /// Why the directory holding `socket` may not hold the agent's socket, or `nil` when it may:
    /// it must be a directory of this user's that nobody else can open (0700 or less), as the
    /// agent makes `$XDG_RUNTIME_DIR/latchkey`. The agent checks it before it listens there and a
    /// client before it connects to the default socket: in a directory another user owns or may
    /// write, the socket could be theirs.
    public static func privacyProblem(ofDirectoryOf socket: String) -> String? {
        guard let slash = socket.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "it is not an absolute path" }
        let directory = slash == socket.utf8.startIndex ? "/" : String(socket[..<slash])
        return privacyProblem(ofDirectory: directory)
    }

    /// Why `directory` may not hold the agent's socket (see `privacyProblem(ofDirectoryOf:)`).
    public static func privacyProblem(ofDirectory directory: String) -> String? {
        switch TrustedDirectory.problem(directory, .privateToYou, followingLinks: false) {
        case nil: return nil
        case .unreadable(let error)?: return String(cString: strerror(error))
        case .notADirectory?: return "it is not a directory"
        case .ownedBy(let owner, _)?: return "it belongs to uid \(owner)"
        case .tooOpen(let mode)?: return "group or others may use it (mode \(String(mode, radix: 8))); run chmod 700 \(directory)"
        }
    }
}
