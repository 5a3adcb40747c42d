import CLatchkeySys
import LatchkeyEssentials
public import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// One conversation with `latchkey agent`: connect, send one request, read its answer lines.
///
/// Used by the launcher (`latchkey token` and `aws-credential` through the agent, without loading
/// the full command), by the full command's broker when an agent answers (`AgentBroker`), and by
/// the screen (approvals, and the `watch` of releases waiting for a person).
public struct AgentClient: ~Copyable {
    public let path: String
    private let descriptor: Int32
    /// Bytes read past the last answer line.
    private var pending: [UInt8] = []

    /// Connects to the agent at `endpoint`, if it is one of this user's (or root's).
    ///
    /// Whoever listens at a socket path gets the request (which names the account) and answers
    /// with what it likes, so the path alone is not trusted: the process that listens must run as
    /// this user or root (SO_PEERCRED), and the default socket's directory must be this user's
    /// and private, as the agent makes it, or its socket is not even tried. A shared
    /// `XDG_RUNTIME_DIR` or an `ssh -R` path another user took first is refused here.
    public init(endpoint: AgentSocket.Endpoint) throws(AgentClientError) {
        let path = endpoint.path
        if !endpoint.isExplicit, let problem = AgentSocket.privacyProblem(ofDirectoryOf: path) {
            throw .unsafeDirectory(path: path, reason: problem)
        }
        let descriptor = lk_unix_connect(path)
        guard descriptor >= 0 else {
            let error = -descriptor
            throw error == ENOENT || error == ECONNREFUSED
                ? .notRunning(path: path, errno: error) : .cannotConnect(path: path, errno: error)
        }
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard lk_peer_credentials(descriptor, &pid, &uid, &gid) == 0 else {
            close(descriptor)
            throw .cannotConnect(path: path, errno: EPROTO)
        }
        guard uid == geteuid() || uid == 0 else {
            close(descriptor)
            throw .untrustedPeer(path: path, uid: uid)
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    public func send(_ request: BrokerRequest, client: ClientClaim? = nil) throws(AgentClientError) {
        guard let line = try? request.line(client: client) else { throw .unencodable(path: path) }
        let result = line.withUnsafeBytes { lk_send_all(descriptor, $0.baseAddress, $0.count) }
        guard result == 0 else { throw .closed(path: path) }
    }

    /// The next line the agent sends. `timeout` bounds the wait for each piece of it, in
    /// milliseconds (-1: none; the agent itself bounds how long a person may take to approve).
    public mutating func answer(timeout: Int32 = -1) throws(AgentClientError) -> BrokerAnswer {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        defer { buffer.zeroize() }
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[..<newline]
                defer { pending.removeSubrange(...newline) }
                do {
                    return try BrokerAnswer.decode(line)
                } catch {
                    throw .mismatch(path: path, error)
                }
            }
            guard pending.count < BrokerWire.answerLimit else {
                throw .mismatch(
                    path: path, WireMismatch(.malformedField(object: "line", reason: "it is longer than any answer"), kind: "answer"))
            }
            let count = buffer.withUnsafeMutableBytes { lk_receive(descriptor, $0.baseAddress, $0.count, timeout) }
            if count == -Int(ETIMEDOUT) { throw .timedOut(path: path) }
            guard count > 0 else { throw .closed(path: path) }
            pending += buffer[0..<count]
        }
    }

    /// Sends `request` and returns the final answer, handing what each interim line says to `notice`.
    public mutating func exchange(
        _ request: BrokerRequest, client: ClientClaim? = .current(), notice: (String) -> Void = { _ in }
    ) throws(AgentClientError) -> BrokerAnswer {
        try send(request, client: client)
        while true {
            let answer = try answer()
            if case .pending(let message) = answer {
                notice(message)
                continue
            }
            return answer
        }
    }
}

/// Why the agent could not be asked. The agent's own refusals are answers, not these.
public enum AgentClientError: LatchkeyError, Equatable {
    /// Nothing listens at the path (no file, or a socket left by an agent that is gone).
    case notRunning(path: String, errno: Int32)
    case cannotConnect(path: String, errno: Int32)
    /// The agent closed the connection before its final answer: it stopped, or the SSH
    /// connection carrying the socket did.
    case closed(path: String)
    case timedOut(path: String)
    /// An answer that is not a line of this version of the protocol.
    case mismatch(path: String, WireMismatch)
    /// The request could not be written as the protocol's JSON.
    case unencodable(path: String)
    /// The process listening at the path runs as another user (not root): it would get the
    /// request and could answer with its own token.
    case untrustedPeer(path: String, uid: UInt32)
    /// The default socket's directory is not this user's, or others may use it.
    case unsafeDirectory(path: String, reason: String)

    public var category: FailureCategory { .unavailable }

    /// The socket exists but is not to be trusted: said even where a missing agent is not.
    public var isUntrusted: Bool {
        switch self {
        case .untrustedPeer, .unsafeDirectory: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .notRunning(let path, let error):
            return "no agent answers at \(TerminalText.sanitized(path, maxLength: 300)) (\(String(cString: strerror(error))));"
                + " start `latchkey agent`, or unset \(AgentSocket.variable) to use this machine's vault"
        case .cannotConnect(let path, let error):
            return "cannot reach the agent at \(TerminalText.sanitized(path, maxLength: 300)): \(String(cString: strerror(error)))"
        case .closed(let path):
            return "the agent at \(TerminalText.sanitized(path, maxLength: 300)) closed the connection without answering;"
                + " it stopped, or the SSH connection forwarding it did"
        case .timedOut(let path):
            return "the agent at \(TerminalText.sanitized(path, maxLength: 300)) did not answer in time"
        case .mismatch(let path, let mismatch):
            return "the agent at \(TerminalText.sanitized(path, maxLength: 300)) cannot be understood: \(mismatch)"
        case .unencodable(let path):
            return "the request to the agent at \(TerminalText.sanitized(path, maxLength: 300)) cannot be written"
        case .untrustedPeer(let path, let uid):
            return "not asking the agent at \(TerminalText.sanitized(path, maxLength: 300)): it runs as uid \(uid), not as you or root,"
                + " and would learn the account asked for and could answer with its own token; if you set \(AgentSocket.variable),"
                + " check where it points"
        case .unsafeDirectory(let path, let reason):
            return "not asking the agent at \(TerminalText.sanitized(path, maxLength: 300)), whose directory another user could"
                + " have put it in: \(TerminalText.sanitized(reason, maxLength: 300))"
        }
    }
}
