import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The one HTTP/1.1 server in Latchkey: the redirect listener, the Identity Toolkit emulator and
/// the demo OpenID provider all serve through it. Each whole request goes to an async handler,
/// which may take its time (the redirect listener holds the browser's answer until the sign-in
/// has judged it); requests on one connection are answered in order.
public final class LoopbackHTTPServer: Sendable {
    public typealias Handler = @Sendable (LoopbackHTTPRequest) async -> LoopbackHTTPResponse

    /// The port every address is bound on.
    public let port: Int
    private let channels: [any Channel]
    private let connections: Connections

    private init(channels: [any Channel], connections: Connections) {
        self.channels = channels
        self.connections = connections
        port = channels.first?.localAddress?.port ?? 0
    }

    /// Binds every one of `addresses` on one port: the first of `ports` free on all of them, or
    /// a free ephemeral one when `ports` is empty (or holds 0). Never some of the addresses only:
    /// a client resolving `localhost` to the family that failed would reach whoever holds that
    /// port there. A request body over `maximumBodyBytes` closes its connection.
    public static func bind(
        addresses: [String], ports: [Int] = [], maximumBodyBytes: Int = 1 << 20, handler: @escaping Handler
    ) async throws(LoopbackHTTPBindError) -> LoopbackHTTPServer {
        let connections = Connections()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                connections.opened(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        RequestHandler(handler: handler, maximumBodyBytes: maximumBodyBytes, connections: connections))
                }
            }
        // An ephemeral port free on one family can be taken on the other: try a few.
        let candidates = ports.isEmpty ? Array(repeating: 0, count: 8) : ports
        var failure = "no address to bind"
        for candidate in candidates {
            var channels: [any Channel] = []
            do {
                var port = candidate
                for address in addresses {
                    let channel = try await bootstrap.bind(host: address, port: port).get()
                    channels.append(channel)
                    port = channel.localAddress?.port ?? port
                }
                return LoopbackHTTPServer(channels: channels, connections: connections)
            } catch {
                for channel in channels { try? await channel.close().get() }
                failure = candidate == 0 ? "an ephemeral port: \(error)" : "port \(candidate): \(error)"
            }
        }
        throw LoopbackHTTPBindError(reason: failure)
    }

    /// `127.0.0.1:PORT`, `[::1]:PORT`: what is listened on.
    public var addresses: [String] {
        channels.compactMap { channel in
            guard let address = channel.localAddress, let ip = address.ipAddress else { return nil }
            return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        }
    }

    /// Stops accepting, lets the requests being handled send their answers, then closes every
    /// connection. Safe to call more than once.
    public func close() async {
        for channel in channels { try? await channel.close().get() }
        await connections.closeAll()
    }
}

/// Why the server could not listen.
public struct LoopbackHTTPBindError: Error, CustomStringConvertible, Equatable {
    /// The last failure, e.g. `port 8080: bind(descriptor:ptr:bytes:): Address already in use (errno: 98)`.
    public let reason: String
    public var description: String { reason }
}

/// The open connections and the requests still being answered, so `close` ends neither early.
private final class Connections: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var answering = 0
        var closing = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let refused = state.withLockedValue { state in
            guard !state.closing else { return true }
            state.open[id] = channel
            return false
        }
        if refused {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [self] _ in _ = state.withLockedValue { $0.open.removeValue(forKey: id) } }
    }

    func answerStarted() { state.withLockedValue { $0.answering += 1 } }

    func answerFinished() {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.answering -= 1
            guard state.answering == 0 else { return [] }
            defer { state.drained = [] }
            return state.drained
        }
        for waiter in waiters { waiter.resume() }
    }

    func closeAll() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLockedValue { state in
                state.closing = true
                if state.answering > 0 { state.drained.append(continuation) }
                return state.answering == 0
            }
            if idle { continuation.resume() }
        }
        let open = state.withLockedValue { Array($0.open.values) }
        for channel in open { try? await channel.close().get() }
    }
}

/// Collects one request, has the handler answer it off the event loop, and writes the answer.
private final class RequestHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let handler: LoopbackHTTPServer.Handler
    private let maximumBodyBytes: Int
    private let connections: Connections
    // Touched on the channel's event loop only.
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(handler: @escaping LoopbackHTTPServer.Handler, maximumBodyBytes: Int, connections: Connections) {
        self.handler = handler
        self.maximumBodyBytes = maximumBodyBytes
        self.connections = connections
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let buffer):
            guard head != nil else { return }
            body += buffer.readableBytesView
            if body.count > maximumBodyBytes {
                head = nil
                body = []
                context.close(promise: nil)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = LoopbackHTTPRequest(
                method: head.method.rawValue, target: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body,
                localPort: context.channel.localAddress?.port ?? 0)
            body = []
            let context = NIOLoopBound(context, eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            connections.answerStarted()
            Task { [handler, connections] in
                let response = await handler(request)
                eventLoop.execute {
                    Self.write(response, to: head, on: context.value).whenComplete { _ in connections.answerFinished() }
                }
            }
        }
    }

    private static func write(_ response: LoopbackHTTPResponse, to head: HTTPRequestHead, on context: ChannelHandlerContext)
        -> EventLoopFuture<Void>
    {
        // A connection closed meanwhile (the client gave up) has nobody to answer.
        guard context.channel.isActive else { return context.eventLoop.makeSucceededVoidFuture() }
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        let keepAlive = head.isKeepAlive && !response.closesConnection
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(
            NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        let written = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
        guard !keepAlive else { return written }
        let channel = context.channel
        return written.flatMap { channel.close() }.recover { _ in }
    }
}
