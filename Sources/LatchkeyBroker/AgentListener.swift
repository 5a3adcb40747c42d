import CLatchkeySys
import Foundation
import LatchkeyBrokerWire
import LatchkeyVault
import Synchronization

/// The agent's sockets and connections, served by one thread that never blocks on a client.
///
/// Every socket and connection is non-blocking and watched by one `poll` loop, so a client that
/// sends garbage, trickles a byte at a time, sends too much, or never reads its answer costs one
/// slot until its deadline, and every other client is served meanwhile. What a request asks is
/// the handler's business (it runs as a task); this type only reads, limits, writes and closes.
final class AgentListener: Sendable {
    /// A socket the agent listens on, open and bound (`AgentSocketFile.listen`).
    struct Socket: Sendable {
        var descriptor: Int32
        var path: String
        var kind: AgentConnection.Kind
    }

    /// What one client may take, each one tried by `Tests/e2e/test_agent.py` as an attacker would.
    struct Limits: Sendable {
        /// A request longer than this (newline included) is refused unread.
        var requestBytes = BrokerWire.requestLimit
        /// The whole request must arrive within this long of the connection.
        var requestTime: Duration = .seconds(5)
        /// A final answer must be taken within this long, or the connection is dropped.
        var answerTime: Duration = .seconds(10)
        /// Connections at once from this machine (waiting confirmations and open screens included);
        /// more are closed at once.
        var localConnections = 64
        /// Connections at once from forwarded hosts (the forward socket, and the local one when ssh
        /// forwards it), counted apart from the local ones: a forwarded host that holds all it may
        /// leaves this machine's clients every one of theirs.
        var forwardedConnections = 32
        /// What a `watch` connection (the screen) may leave unread before it is dropped.
        var unreadBytes = 1 << 20
    }

    /// Called on the listener's thread for each complete request line; must not block.
    typealias Handler = @Sendable (AgentConnection, [UInt8]) -> Void

    private let sockets: [Socket]
    private let limits: Limits
    private let handler: Handler
    private let log: @Sendable (String) -> Void
    /// Written to by any thread to wake `poll` (answers to send, `stop`).
    private let wake: (read: Int32, write: Int32)
    private let outbox = Mutex<(answers: [(connection: Int, bytes: [UInt8], final: Bool)], stopping: Bool)>(([], false))

    init(
        sockets: [Socket], limits: Limits = Limits(), log: @escaping @Sendable (String) -> Void,
        handler: @escaping Handler
    ) throws {
        var fds: [Int32] = [0, 0]
        guard lk_pipe_cloexec(&fds) == 0 else { throw AgentError.cannotListen(path: "pipe", reason: String(cString: strerror(errno))) }
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        wake = (fds[0], fds[1])
        self.sockets = sockets
        self.limits = limits
        self.handler = handler
        self.log = log
    }

    /// Makes `run` return (from any thread, a signal handler's task included).
    func stop() {
        outbox.withLock { $0.stopping = true }
        poke()
    }

    fileprivate func queue(_ bytes: [UInt8], final: Bool, on connection: Int) {
        outbox.withLock { $0.answers.append((connection, bytes, final)) }
        poke()
    }

    private func poke() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    // MARK: - The loop

    private struct Client {
        var connection: AgentConnection
        var descriptor: Int32
        var input: [UInt8] = []
        var output: [UInt8] = []
        /// Until the request is whole; then until the final answer is taken.
        var deadline: ContinuousClock.Instant
        var requestRead = false
        var finalQueued = false
    }

    /// Serves until `stop`; closes every connection and the wake pipe on the way out (the
    /// sockets are the caller's).
    func run() {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var notices: [String: RepeatedNotice] = [:]
        let clock = ContinuousClock()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        defer {
            for client in clients.values { drop(client) }
            close(wake.read)
            close(wake.write)
        }
        while true {
            let (answers, stopping) = outbox.withLock { state in
                defer { state.answers = [] }
                return (state.answers, state.stopping)
            }
            if stopping { return }
            for answer in answers {
                guard var client = clients[answer.connection] else { continue }
                client.output += answer.bytes
                if answer.final {
                    client.finalQueued = true
                    client.deadline = clock.now + limits.answerTime
                }
                clients[answer.connection] = client
            }
            for (id, client) in clients where client.output.count > limits.unreadBytes {
                log("dropped a connection that left \(client.output.count) bytes unread (\(client.connection.peerSummary))")
                drop(client)
                clients[id] = nil
            }

            var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            fds += sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            let order = Array(clients.keys)
            for id in order {
                let client = clients[id]!
                // POLLHUP and POLLERR come unasked: a peer gone while its request is handled.
                var events: Int16 = 0
                if !client.requestRead { events |= Int16(POLLIN) }
                if !client.output.isEmpty { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: client.descriptor, events: events, revents: 0))
            }
            let now = clock.now
            let nearest = min(clients.values.map { $0.deadline - now }.min() ?? .seconds(1), .seconds(1))
            let (seconds, attoseconds) = max(nearest, .zero).components
            if poll(&fds, nfds_t(fds.count), Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000) + 1) < 0 && errno != EINTR {
                log("poll failed: \(String(cString: strerror(errno)))")
                return
            }
            if fds[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 256)
                while Glibc.read(wake.read, &drain, drain.count) > 0 {}
            }
            for (index, socket) in sockets.enumerated() where fds[1 + index].revents != 0 {
                accept(on: socket, into: &clients, nextID: &nextID, notices: &notices, now: clock.now)
            }
            for (offset, id) in order.enumerated() {
                guard var client = clients[id] else { continue }
                let revents = Int32(fds[1 + sockets.count + offset].revents)
                var keep = true
                if revents & Int32(POLLIN) != 0 && !client.requestRead {
                    keep = read(into: &client, buffer: &buffer, notice: &notices["long", default: RepeatedNotice()], now: clock.now)
                }
                if keep && revents & Int32(POLLOUT) != 0 && !client.output.isEmpty {
                    let sent = client.output.withUnsafeBytes { lk_send_some(client.descriptor, $0.baseAddress, $0.count) }
                    if sent > 0 {
                        client.output.removeFirst(sent)
                    } else if sent != -Int(EAGAIN) {
                        keep = false
                    }
                }
                if keep && client.finalQueued && client.output.isEmpty { keep = false }
                // The peer went away: a request waiting for a person is abandoned.
                if keep && revents & (Int32(POLLHUP) | Int32(POLLERR)) != 0 && client.requestRead { keep = false }
                if keep && clock.now >= client.deadline && !(client.requestRead && !client.finalQueued) {
                    if !client.requestRead {
                        refuse(client, "the request did not arrive within \(limits.requestTime.components.seconds) s")
                    }
                    keep = false
                }
                if keep {
                    clients[id] = client
                } else {
                    drop(client)
                    clients[id] = nil
                }
            }
        }
    }

    /// Takes every connection waiting on `socket`: each one from another user, or past its kind's
    /// limit, is closed at once. What is said about them is said at most once per
    /// `RepeatedNotice.interval` for each reason, since a client can cause it as often as it likes.
    private func accept(
        on socket: Socket, into clients: inout [Int: Client], nextID: inout Int, notices: inout [String: RepeatedNotice],
        now: ContinuousClock.Instant
    ) {
        func say(_ reason: String, _ text: String) {
            if let line = notices[reason, default: RepeatedNotice()].occurred(text, at: now) { log(line) }
        }
        while true {
            let descriptor = lk_unix_accept(socket.descriptor)
            guard descriptor >= 0 else { return }
            var pid: pid_t = 0
            var uid: uid_t = 0
            var gid: gid_t = 0
            guard lk_peer_credentials(descriptor, &pid, &uid, &gid) == 0, uid == geteuid() else {
                say("uid", "refused a connection on \(socket.path) from uid \(uid) (pid \(pid)): only uid \(geteuid()) may use this agent")
                close(descriptor)
                continue
            }
            // `ssh -R …:agent.sock` forwards the local socket itself: its connections come from
            // the ssh client (or, with `ssh -L`, sshd) and are served as forwarded ones.
            var kind = socket.kind
            let fromSSH = kind == .local && Requester.isSSH(pid)
            if fromSSH { kind = .forwarded }
            let limit = kind == .local ? limits.localConnections : limits.forwardedConnections
            guard clients.values.count(where: { $0.connection.kind == kind }) < limit else {
                say(
                    "full \(kind.rawValue)",
                    "refused a connection on \(socket.path): \(limit) \(kind.rawValue) connections are open already")
                close(descriptor)
                continue
            }
            if fromSSH {
                say(
                    "ssh",
                    "a connection on \(socket.path) came from ssh (pid \(pid)): served as forwarded;"
                        + " forward the --forward-socket path instead")
            }
            let id = nextID
            nextID += 1
            let connection = AgentConnection(id: id, kind: kind, pid: pid, listener: self)
            clients[id] = Client(connection: connection, descriptor: descriptor, deadline: now + limits.requestTime)
        }
    }

    /// Reads what arrived; hands a whole line to the handler. `false` drops the connection.
    private func read(into client: inout Client, buffer: inout [UInt8], notice: inout RepeatedNotice, now: ContinuousClock.Instant) -> Bool
    {
        let room = limits.requestBytes - client.input.count
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(client.descriptor, $0.baseAddress, min(room, $0.count), 0) }
        if count < 0 { return errno == EAGAIN || errno == EINTR }
        if count == 0 { return false }
        client.input += buffer[0..<count]
        if let newline = client.input.firstIndex(of: UInt8(ascii: "\n")) {
            client.requestRead = true
            let line = Array(client.input[..<newline])
            client.input = []
            handler(client.connection, line)
            return true
        }
        guard client.input.count < limits.requestBytes else {
            refuse(client, "the request is longer than \(limits.requestBytes) bytes")
            if let line = notice.occurred(
                "refused a request longer than \(limits.requestBytes) bytes (\(client.connection.peerSummary))", at: now)
            {
                log(line)
            }
            return false
        }
        return true
    }

    /// One last line saying why, if the socket takes it now; the connection is dropped after.
    private func refuse(_ client: Client, _ reason: String) {
        guard let line = try? BrokerAnswer.refused(BrokerRefusal(message: reason, category: .usage)).line() else { return }
        _ = line.withUnsafeBytes { lk_send_some(client.descriptor, $0.baseAddress, $0.count) }
    }

    private func drop(_ client: Client) {
        close(client.descriptor)
        client.connection.closed()
    }
}

/// One client's connection, as the agent's handler sees it: where it came from and how to answer.
final class AgentConnection: Sendable {
    /// Local: this machine's processes (the socket in `$XDG_RUNTIME_DIR/latchkey`). Forwarded:
    /// the socket `--forward-socket` made for `ssh -R`, whose clients are on other hosts.
    enum Kind: String, Sendable {
        case local
        case forwarded
    }

    let id: Int
    let kind: Kind
    /// The connecting process (SO_PEERCRED): on a forwarded socket, this machine's ssh client.
    let pid: pid_t
    private let listener: AgentListener
    private let state = Mutex<(isClosed: Bool, onClose: [@Sendable () -> Void])>((false, []))

    fileprivate init(id: Int, kind: Kind, pid: pid_t, listener: AgentListener) {
        self.id = id
        self.kind = kind
        self.pid = pid
        self.listener = listener
    }

    var peerSummary: String { "pid \(pid) on the \(kind.rawValue) socket" }

    /// Sends one answer line; `final` closes the connection once it is written.
    func send(_ answer: BrokerAnswer, final: Bool = true) {
        guard !isClosed, let line = try? answer.line() else { return }
        listener.queue(line, final: final, on: id)
    }

    var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Runs `action` when the connection closes (at once when it already has).
    func onClose(_ action: @escaping @Sendable () -> Void) {
        let closedAlready = state.withLock { state in
            if !state.isClosed { state.onClose.append(action) }
            return state.isClosed
        }
        if closedAlready { action() }
    }

    fileprivate func closed() {
        let actions = state.withLock { state in
            defer { state = (true, []) }
            return state.onClose
        }
        actions.forEach { $0() }
    }
}
