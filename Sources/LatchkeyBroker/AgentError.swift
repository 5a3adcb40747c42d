public import LatchkeyBrokerWire
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

    /// A line that is not a request of this version of the broker's protocol.
    case mismatch(WireMismatch)
    /// `approve`, `deny` and `watch` are for this machine's own commands.
    case notForForwarded(operation: String)
    case noSuchConfirmation(Int)

    public var category: FailureCategory {
        switch self {
        case .noRuntimeDirectory, .mismatch: return .usage
        case .unsafeDirectory, .notOurSocket, .cannotListen: return .cannotCreate
        case .alreadyRunning: return .unavailable
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
        case .mismatch(let mismatch):
            return mismatch.description
        case .notForForwarded(let operation):
            return "\(operation) is answered only on the agent's own machine, not over a forwarded socket"
        case .noSuchConfirmation(let id):
            return "no request \(id) waits for approval (answered already, or timed out)"
        }
    }
}
