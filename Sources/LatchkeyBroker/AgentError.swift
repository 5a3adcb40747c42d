import LatchkeyBrokerWire
import LatchkeyEssentials
public import LatchkeyVault

/// Why the agent would not start, or refused a request. Paths are named; tokens never are.
public enum AgentError: LatchkeyError, Equatable {
    // MARK: Starting

    /// No `--socket` and no `XDG_RUNTIME_DIR` to put the default one in.
    case noRuntimeDirectory
    /// The socket's directory is unsafe: another user's, or open to others.
    case unsafeDirectory(path: String, reason: String)
    /// Something that is not this user's socket is at the path: never removed, never used.
    case notOurSocket(path: String, reason: String)
    /// An agent answers there already.
    case alreadyRunning(path: String)
    case cannotListen(path: String, reason: String)

    // MARK: Requests

    /// Not one JSON request line of the protocol.
    case malformedRequest(reason: String)
    case unsupportedVersion(Int)
    case unknownOperation(String)
    /// `approve`, `deny` and `watch` are for this machine's own commands.
    case notForForwarded(operation: String)
    case noSuchConfirmation(Int)
    /// A client's refused token made the agent refresh this account moments ago
    /// (`Agent.forcedRefreshInterval`); not again yet.
    case refreshedRecently(account: String, seconds: Int)

    public var category: FailureCategory {
        switch self {
        case .noRuntimeDirectory, .malformedRequest, .unsupportedVersion, .unknownOperation: return .usage
        case .unsafeDirectory, .notOurSocket, .cannotListen: return .cannotCreate
        case .alreadyRunning, .refreshedRecently: return .unavailable
        case .notForForwarded: return .keystore
        case .noSuchConfirmation: return .notFound
        }
    }

    public var description: String {
        switch self {
        case .noRuntimeDirectory:
            return "XDG_RUNTIME_DIR is not set, so there is no place for the agent's socket; set it, or give --socket PATH"
        case .unsafeDirectory(let path, let reason):
            return "\(path) cannot hold the agent's socket: \(reason)"
        case .notOurSocket(let path, let reason):
            return "\(path) \(reason); the agent neither uses nor removes it. Move it aside, or give another path"
        case .alreadyRunning(let path):
            return "an agent already answers at \(path); stop it first, or give another path"
        case .cannotListen(let path, let reason):
            return "cannot listen at \(path): \(reason)"
        case .malformedRequest(let reason):
            return "not a request: \(reason)"
        case .unsupportedVersion(let version):
            return "protocol version \(version) is not one this agent speaks (\(AgentWire.version)); use the same Latchkey on both ends"
        case .unknownOperation(let name):
            return "unknown request \"\(TerminalText.sanitized(name, maxLength: 40))\""
        case .notForForwarded(let operation):
            return "\(operation) is answered only on the agent's own machine, not over a forwarded socket"
        case .noSuchConfirmation(let id):
            return "no request \(id) waits for approval (answered already, or timed out)"
        case .refreshedRecently(let account, let seconds):
            return
                "\(TerminalText.sanitized(account, maxLength: 200)) was refreshed moments ago for a token a server refused; the agent refreshes it again for that reason in \(seconds) s (a server refusing fresh tokens needs a look where the agent runs)"
        }
    }
}
