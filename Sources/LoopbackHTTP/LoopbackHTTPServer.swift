import CLatchkeySys
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one HTTP/1.1 server in Latchkey: the redirect listener, the Identity Toolkit emulator and
/// the demo OpenID provider all serve through it. Each whole request goes to an async handler,
/// which may take its time (the redirect listener holds the browser's answer until the sign-in
/// has judged it); requests on one connection are answered in order.
///
/// A thread accepts on each address and a thread serves each connection, blocking on its
/// socket: the servers here see a browser, a test client or a demo at a time, so threads cost
/// nothing that matters, and the server needs no event loop library (SwiftNIO took a quarter of
/// the release build).
public final class LoopbackHTTPServer: Sendable {
    public typealias Handler = @Sendable (LoopbackHTTPRequest) async -> LoopbackHTTPResponse

    /// The port every address is bound on.
    public let port: Int
    /// `127.0.0.1:PORT`, `[::1]:PORT`: what is listened on.
    public let addresses: [String]
    private let listeners: [Int32]
    private let connections: Connections

    /// At most this many connections are served at once; more are closed as they come.
    static let connectionLimit = 64
    /// A request head (request line and headers) larger than this closes its connection.
    static let headLimit = 64 << 10
    /// How long a connection may wait between two pieces of a request, or for the next one.
    static let idleMilliseconds: Int32 = 60_000

    private init(port: Int, addresses: [String], listeners: [Int32], connections: Connections) {
        self.port = port
        self.addresses = addresses
        self.listeners = listeners
        self.connections = connections
    }

    /// Binds every one of `addresses` on one port: the first of `ports` free on all of them, or
    /// a free ephemeral one when `ports` is empty (or holds 0). Never some of the addresses only:
    /// a client resolving `localhost` to the family that failed would reach whoever holds that
    /// port there. A request body over `maximumBodyBytes` closes its connection.
    public static func bind(
        addresses: [String], ports: [Int] = [], maximumBodyBytes: Int = 1 << 20, handler: @escaping Handler
    ) async throws(LoopbackHTTPBindError) -> LoopbackHTTPServer {
        // An ephemeral port free on one family can be taken on the other: try a few.
        let candidates = ports.isEmpty ? Array(repeating: 0, count: 8) : ports
        var failure = "no address to bind"
        for candidate in candidates {
            var bound: [Int32] = []
            var port = candidate
            var problem: String?
            for address in addresses {
                var chosen: Int32 = 0
                let descriptor = lk_tcp_listen(address, Int32(port), 64, &chosen)
                guard descriptor >= 0 else {
                    problem = "\(address) port \(port): \(String(cString: strerror(-descriptor))) (errno: \(-descriptor))"
                    break
                }
                bound.append(descriptor)
                port = Int(chosen)
            }
            guard let problem else {
                let named = addresses.map { $0.contains(":") ? "[\($0)]:\(port)" : "\($0):\(port)" }
                let server = LoopbackHTTPServer(
                    port: port, addresses: named, listeners: bound,
                    connections: Connections(handler: handler, maximumBodyBytes: maximumBodyBytes, localPort: port))
                server.startAccepting()
                return server
            }
            bound.forEach { _ = Glibc.close($0) }
            failure = candidate == 0 ? "an ephemeral port: \(problem)" : "port \(candidate): \(problem)"
        }
        throw LoopbackHTTPBindError(reason: failure)
    }

    /// A thread per listening socket accepts until the socket is shut down, and then closes it:
    /// each descriptor is closed by the one thread that uses it, so none is closed under a
    /// thread still blocked on it, whose next call would reach whatever reused the number.
    private func startAccepting() {
        for listener in listeners {
            let connections = self.connections
            Self.detach("latchkey-http-accept") {
                while true {
                    let descriptor = lk_tcp_accept(listener)
                    guard descriptor >= 0 else { break }
                    connections.serve(descriptor)
                }
                _ = Glibc.close(listener)
            }
        }
    }

    /// Stops accepting, lets the requests being handled send their answers, then ends every
    /// connection. Safe to call more than once.
    public func close() async {
        guard connections.beginClosing() else { return await connections.drained() }
        for listener in listeners { lk_tcp_shutdown(listener) }
        await connections.drained()
        connections.endAll()
    }

    /// Runs `body` on a thread of its own, detached.
    static func detach(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadBody(body))
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
                body.run()
                return nil
            }, box.toOpaque())
        if started == 0 {
            pthread_detach(thread)
        } else {
            box.release()
        }
    }
}

/// A closure handed to a new thread.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// Why the server could not listen.
public struct LoopbackHTTPBindError: Error, CustomStringConvertible, Equatable {
    /// The last failure, e.g. `port 8080: 127.0.0.1 port 8080: Address already in use (errno: 98)`.
    public let reason: String
    public var description: String { reason }
}

/// The open connections and the requests still being answered, so `close` ends neither early.
private final class Connections: Sendable {
    private struct State {
        var open: Set<Int32> = []
        var answering = 0
        var closing = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    let handler: LoopbackHTTPServer.Handler
    let maximumBodyBytes: Int
    let localPort: Int
    private let state = Mutex(State())

    init(handler: @escaping LoopbackHTTPServer.Handler, maximumBodyBytes: Int, localPort: Int) {
        self.handler = handler
        self.maximumBodyBytes = maximumBodyBytes
        self.localPort = localPort
    }

    /// Serves a new connection on a thread of its own, unless the server is closing or full.
    func serve(_ descriptor: Int32) {
        let taken = state.withLock { state in
            guard !state.closing, state.open.count < LoopbackHTTPServer.connectionLimit else { return false }
            state.open.insert(descriptor)
            return true
        }
        guard taken else {
            _ = close(descriptor)
            return
        }
        LoopbackHTTPServer.detach("latchkey-http-connection") { [self] in
            var connection = Connection(descriptor: descriptor)
            while let request = connection.nextRequest(maximumBodyBytes: maximumBodyBytes, localPort: localPort) {
                guard answerStarted() else { break }
                let response = answer(request.request)
                let kept = connection.send(response, keepAlive: request.keepAlive && !response.closesConnection)
                answerFinished()
                if !kept { break }
            }
            // Out of the set first, so `endAll` never shuts down a number this thread gave back.
            _ = state.withLock { $0.open.remove(descriptor) }
            _ = close(descriptor)
        }
    }

    /// The handler's answer, awaited on this connection's thread (not one of Swift's
    /// cooperative threads, which must never block).
    private func answer(_ request: LoopbackHTTPRequest) -> LoopbackHTTPResponse {
        let done = DispatchSemaphore(value: 0)
        let answer = Mutex<LoopbackHTTPResponse?>(nil)
        Task { [handler] in
            let response = await handler(request)
            answer.withLock { $0 = response }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0! }
    }

    private func answerStarted() -> Bool {
        state.withLock { state in
            guard !state.closing else { return false }
            state.answering += 1
            return true
        }
    }

    private func answerFinished() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.answering -= 1
            guard state.closing, state.answering == 0 else { return [] }
            defer { state.drained = [] }
            return state.drained
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Marks the server closing; `false` when it already was.
    func beginClosing() -> Bool {
        state.withLock { state in
            defer { state.closing = true }
            return !state.closing
        }
    }

    /// Returns once no request is being answered.
    func drained() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state in
                if state.answering > 0 { state.drained.append(continuation) }
                return state.answering == 0
            }
            if idle { continuation.resume() }
        }
    }

    /// Ends every connection still open (idle ones, waiting for a next request): each is shut
    /// down, which wakes its thread, and that thread closes it. Under the lock, so a connection
    /// whose thread is closing it is not shut down after its number was given back.
    func endAll() {
        state.withLock { state in
            for descriptor in state.open { lk_tcp_shutdown(descriptor) }
        }
    }
}

/// One connection's bytes: requests read from it, answers written to it.
private struct Connection {
    let descriptor: Int32
    /// Bytes read past the last request.
    private var pending: [UInt8] = []

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// The next whole request, or `nil` when the connection ends, idles too long or breaks the
    /// protocol (a malformed or oversized request is answered 400 or 413 first).
    mutating func nextRequest(maximumBodyBytes: Int, localPort: Int) -> (request: LoopbackHTTPRequest, keepAlive: Bool)? {
        guard let headEnd = readUntilHeadEnd() else { return nil }
        let headBytes = pending[..<headEnd]
        pending.removeSubrange(..<(headEnd + 4))
        guard let head = RequestHead(String(decoding: headBytes, as: UTF8.self)) else {
            refuse(400, "Bad Request")
            return nil
        }
        let body: [UInt8]
        if let encoding = head.header("Transfer-Encoding"), encoding.lowercased() != "identity" {
            guard encoding.lowercased() == "chunked", let chunked = readChunked(limit: maximumBodyBytes) else {
                refuse(400, "Bad Request")
                return nil
            }
            body = chunked
        } else if let length = head.header("Content-Length") {
            guard let count = Int(length.trimmingSpaces), count >= 0 else {
                refuse(400, "Bad Request")
                return nil
            }
            guard count <= maximumBodyBytes else {
                refuse(413, "Content Too Large")
                return nil
            }
            guard let read = read(count) else { return nil }
            body = read
        } else {
            body = []
        }
        let request = LoopbackHTTPRequest(
            method: head.method, target: head.target, headers: head.headers, body: body, localPort: localPort)
        return (request, head.keepAlive)
    }

    /// The index of the blank line ending the head (`\r\n\r\n`), reading as needed.
    private mutating func readUntilHeadEnd() -> Int? {
        var searchedUpTo = 0
        while true {
            if pending.count >= 4 {
                for index in max(0, searchedUpTo - 3)..<(pending.count - 3)
                where pending[index] == 13 && pending[index + 1] == 10 && pending[index + 2] == 13 && pending[index + 3] == 10 {
                    return index
                }
                searchedUpTo = pending.count
            }
            guard pending.count <= LoopbackHTTPServer.headLimit else {
                refuse(431, "Request Header Fields Too Large")
                return nil
            }
            guard receiveMore() else { return nil }
        }
    }

    /// Exactly `count` more bytes of the request.
    private mutating func read(_ count: Int) -> [UInt8]? {
        while pending.count < count {
            guard receiveMore() else { return nil }
        }
        defer { pending.removeSubrange(..<count) }
        return Array(pending[..<count])
    }

    /// One line ending in CRLF, without it.
    private mutating func readLine(limit: Int) -> [UInt8]? {
        while true {
            if let end = pending.indices.dropLast().first(where: { pending[$0] == 13 && pending[$0 + 1] == 10 }) {
                defer { pending.removeSubrange(..<(end + 2)) }
                return Array(pending[..<end])
            }
            guard pending.count <= limit, receiveMore() else { return nil }
        }
    }

    /// A chunked body (RFC 9112 §7.1), its trailers read and dropped; `nil` when malformed or
    /// over `limit`.
    private mutating func readChunked(limit: Int) -> [UInt8]? {
        var body: [UInt8] = []
        while true {
            guard let line = readLine(limit: 1024) else { return nil }
            let size = String(decoding: line.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self).trimmingSpaces
            guard let count = Int(size, radix: 16), count >= 0, body.count + count <= limit else { return nil }
            if count == 0 {
                while let trailer = readLine(limit: LoopbackHTTPServer.headLimit), !trailer.isEmpty {}
                return body
            }
            guard let chunk = read(count + 2), chunk[count] == 13, chunk[count + 1] == 10 else { return nil }
            body += chunk[..<count]
        }
    }

    /// Reads what the client sent next; `false` at its end, a failure or the idle time-out.
    private mutating func receiveMore() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let count = buffer.withUnsafeMutableBytes { lk_receive(descriptor, $0.baseAddress, $0.count, LoopbackHTTPServer.idleMilliseconds) }
        guard count > 0 else { return false }
        pending += buffer[..<count]
        return true
    }

    /// Writes `response`; `false` when the connection is to end (or broke).
    func send(_ response: LoopbackHTTPResponse, keepAlive: Bool) -> Bool {
        var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        for (name, value) in response.headers
        where name.lowercased() != "content-length" && !(keepAlive == false && name.lowercased() == "connection") {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(response.body.count)\r\n"
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + response.body
        let sent = bytes.withUnsafeBytes { lk_send_all(descriptor, $0.baseAddress, $0.count) }
        return sent == 0 && keepAlive
    }

    /// Answers a request that cannot be served, and the connection ends.
    private func refuse(_ status: Int, _ text: String) {
        _ = send(
            LoopbackHTTPResponse(status: status, headers: [("Content-Type", "text/plain")], body: Array((text + "\n").utf8)),
            keepAlive: false)
    }

    /// The reason phrase of the statuses the servers here send.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 302: return "Found"
        case 303: return "See Other"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 421: return "Misdirected Request"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}

/// A request line and its headers (RFC 9112 §3, §5).
private struct RequestHead {
    var method: String
    var target: String
    var version: String
    var headers: [(name: String, value: String)]

    init?(_ text: String) {
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, !requestLine[1].isEmpty,
            requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0"
        else { return nil }
        method = String(requestLine[0])
        target = String(requestLine[1])
        version = String(requestLine[2])
        headers = []
        for line in lines {
            // Obsolete line folding and names with spaces are refused (RFC 9112 §5.1, §5.2).
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }), line.first != " ", line.first != "\t"
            else { return nil }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingSpaces))
        }
    }

    func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 only when asked to keep it.
    var keepAlive: Bool {
        let connection = header("Connection")?.lowercased() ?? ""
        return version == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (optional whitespace, RFC 9110 §5.6.3).
    var trimmingSpaces: String {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
