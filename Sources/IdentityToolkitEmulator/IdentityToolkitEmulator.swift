public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The emulator served over HTTP on a loopback port, startable in-process from tests.
///
/// Addressing follows the Firebase emulator: `http://127.0.0.1:PORT/identitytoolkit.googleapis.com/v1/...`,
/// `.../securetoken.googleapis.com/v1/token`, and the JWKS at
/// `.../www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com`.
public final class IdentityToolkitEmulator: Sendable {
    public let state: IdentityToolkitState
    public let port: Int
    private let channel: any Channel

    private init(state: IdentityToolkitState, port: Int, channel: any Channel) {
        self.state = state
        self.port = port
        self.channel = channel
    }

    /// Binds `host:port` (port 0: any free one) and serves until `shutdown()`.
    public static func start(
        configuration: EmulatorConfiguration, host: String = "127.0.0.1", port: Int = 0,
        clock: @escaping @Sendable () -> Date = { Date() }, log: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> IdentityToolkitEmulator {
        let state = try IdentityToolkitState(configuration: configuration, clock: clock, log: log)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(state: state))
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        return IdentityToolkitEmulator(state: state, port: channel.localAddress?.port ?? port, channel: channel)
    }

    /// `http://127.0.0.1:PORT`
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// What a provider file's `identitytoolkit_url` points at.
    public var identityToolkitURL: URL { baseURL.appendingPathComponent("identitytoolkit.googleapis.com") }
    /// What a provider file's `securetoken_url` points at.
    public var secureTokenURL: URL { baseURL.appendingPathComponent("securetoken.googleapis.com") }
    /// What a provider file's `jwks_uri` points at.
    public var jwksURL: URL {
        URL(string: "http://127.0.0.1:\(port)/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com")!
    }

    public func shutdown() async {
        try? await channel.close().get()
    }

    /// Collects one request, answers it from `state`.
    private final class RequestHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let state: IdentityToolkitState
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(state: IdentityToolkitState) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(let buffer):
                body += buffer.readableBytesView
                if body.count > 1 << 20 { context.close(promise: nil) }
            case .end:
                guard let head else { return }
                let request = EmulatorRequest(
                    method: head.method.rawValue, uri: head.uri,
                    headers: Dictionary(head.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a }),
                    body: body)
                let response = state.handle(request)
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "application/json; charset=UTF-8")
                headers.add(name: "Content-Length", value: String(response.body.count))
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
