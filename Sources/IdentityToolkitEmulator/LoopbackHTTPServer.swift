public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 server on a loopback address that hands each whole request to one function: the
/// emulator and the demo OpenID provider both serve through it.
public final class LoopbackHTTPServer: Sendable {
    public typealias Handler = @Sendable (EmulatorRequest) -> EmulatorResponse

    public let port: Int
    private let channel: any Channel

    private init(port: Int, channel: any Channel) {
        self.port = port
        self.channel = channel
    }

    /// Binds `host:port` (port 0: any free one) and serves until `shutdown()`. Bodies over
    /// `maximumBodyBytes` close the connection.
    public static func start(host: String = "127.0.0.1", port: Int = 0, maximumBodyBytes: Int = 1 << 20, handler: @escaping Handler)
        async throws -> LoopbackHTTPServer
    {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(handler: handler, maximumBodyBytes: maximumBodyBytes))
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        return LoopbackHTTPServer(port: channel.localAddress?.port ?? port, channel: channel)
    }

    public func shutdown() async {
        try? await channel.close().get()
    }

    /// Collects one request, answers it with the handler.
    private final class RequestHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let handler: Handler
        let maximumBodyBytes: Int
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(handler: @escaping Handler, maximumBodyBytes: Int) {
            self.handler = handler
            self.maximumBodyBytes = maximumBodyBytes
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(let buffer):
                body += buffer.readableBytesView
                if body.count > maximumBodyBytes { context.close(promise: nil) }
            case .end:
                guard let head else { return }
                let request = EmulatorRequest(
                    method: head.method.rawValue, uri: head.uri,
                    headers: Dictionary(head.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a }),
                    body: body)
                let response = handler(request)
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: response.contentType)
                headers.add(name: "Content-Length", value: String(response.body.count))
                for header in response.headers { headers.add(name: header.name, value: header.value) }
                let keepAlive = head.isKeepAlive
                if !keepAlive { headers.add(name: "Connection", value: "close") }
                context.write(
                    wrapOutboundOut(
                        .head(HTTPResponseHead(version: head.version, status: .init(statusCode: response.status), headers: headers))),
                    promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
                let promise: EventLoopPromise<Void>? = keepAlive ? nil : context.eventLoop.makePromise()
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
                if let promise {
                    let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                    promise.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
                }
                self.head = nil
            }
        }
    }
}
