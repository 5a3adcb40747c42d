import Foundation
public import LatchkeyVault
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The loopback redirect listener (RFC 8252 §7.3): bound before the browser opens, on 127.0.0.1
/// and [::1] at one ephemeral port, answering exactly one request and then closing.
///
/// The listener does not judge requests itself: the first request is handed to `decide`, the
/// browser gets a page saying whether to look at the terminal, and the listener stops. A stray
/// request at another path therefore ends the sign-in instead of being silently skipped, which is
/// what makes a response for another provider impossible to slip in later.
public final class LoopbackListener: Sendable {
    public let port: Int
    private let channels: [any Channel]
    fileprivate let outcome: NIOLockedValueBox<Outcome>

    fileprivate struct Outcome {
        var request: RedirectRequest?
        var waiter: CheckedContinuation<RedirectRequest?, Never>?
        var finished = false
    }

    /// Binds every address the redirect URI's host can reach (`127.0.0.1`, `[::1]`, or both for
    /// `localhost`) on one port: the first of `ports` free on all of them, or a free ephemeral
    /// one when `ports` is empty. Never a half-bound listener: a browser resolving `localhost`
    /// to the family that failed would otherwise take the code to whoever holds that port.
    public static func bind(
        host: OAuthClient.LoopbackHost = .ipv4, ports: [Int] = []
    ) async throws(LoopbackListenerError) -> LoopbackListener {
        let outcome = NIOLockedValueBox(Outcome())
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 8)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RedirectHandler(outcome: outcome))
                }
            }
        let addresses = host.listenAddresses
        // An ephemeral port free on one family can be taken on the other: try a few.
        let candidates = ports.isEmpty ? Array(repeating: 0, count: 8) : ports
        var failures: [String] = []
        for candidate in candidates {
            var channels: [any Channel] = []
            do {
                var port = candidate
                for address in addresses {
                    let channel = try await bootstrap.bind(host: address, port: port).get()
                    channels.append(channel)
                    port = channel.localAddress?.port ?? port
                }
                return LoopbackListener(channels: channels, outcome: outcome)
            } catch {
                for channel in channels { try? await channel.close().get() }
                failures.append(candidate == 0 ? "an ephemeral port: \(error)" : "port \(candidate): \(error)")
            }
        }
        throw .cannotBind(
            ports.isEmpty ? failures.last ?? "no port" : "none of loopback_port \(ports.map(String.init).joined(separator: ", ")) is free")
    }

    private init(channels: [any Channel], outcome: NIOLockedValueBox<Outcome>) {
        self.channels = channels
        self.port = channels.first?.localAddress?.port ?? 0
        self.outcome = outcome
    }

    /// The addresses listened on, for the screen ("listening on 127.0.0.1:PORT and [::1]:PORT").
    public var addresses: [String] {
        channels.compactMap { channel in
            guard let address = channel.localAddress, let ip = address.ipAddress else { return nil }
            return ip.contains(":") ? "[\(ip)]:\(address.port ?? 0)" : "\(ip):\(address.port ?? 0)"
        }
    }

    /// Waits for the first request, up to `timeout`; `nil` when the time ran out.
    public func firstRequest(timeout: Duration) async -> RedirectRequest? {
        let timer = Task { [outcome] in
            try? await Task.sleep(for: timeout)
            Self.finish(outcome, with: nil)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                outcome.withLockedValue { state in
                    if state.finished {
                        continuation.resume(returning: state.request)
                    } else {
                        state.waiter = continuation
                    }
                }
            }
        } onCancel: { [outcome] in
            Self.finish(outcome, with: nil)
        }
    }

    /// Stops listening; safe to call more than once.
    public func close() async {
        Self.finish(outcome, with: nil)
        for channel in channels { try? await channel.close().get() }
    }

    fileprivate static func finish(_ outcome: NIOLockedValueBox<Outcome>, with request: RedirectRequest?) {
        let waiter: CheckedContinuation<RedirectRequest?, Never>? = outcome.withLockedValue { state in
            guard !state.finished else { return nil }
            state.finished = true
            state.request = request
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: request)
    }

    /// Answers the one request, records it, and refuses everything after it.
    private final class RedirectHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        fileprivate let outcome: NIOLockedValueBox<Outcome>

        init(outcome: NIOLockedValueBox<Outcome>) { self.outcome = outcome }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            let alreadyFinished = outcome.withLockedValue { $0.finished }
            let page: String
            if alreadyFinished {
                page = Self.page(title: "Nothing to do", body: "Latchkey is not waiting for a sign-in here any more.")
            } else {
                LoopbackListener.finish(outcome, with: RedirectRequest(target: head.uri, host: head.headers.first(name: "Host")))
                page = Self.page(
                    title: "Return to the terminal",
                    body: "Latchkey received the browser's answer. You can close this tab and return to the terminal.")
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
            headers.add(name: "Content-Length", value: String(page.utf8.count))
            headers.add(name: "Cache-Control", value: "no-store")
            headers.add(name: "Connection", value: "close")
            headers.add(name: "Referrer-Policy", value: "no-referrer")
            let status: HTTPResponseStatus = alreadyFinished ? .gone : .ok
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: page)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [context] _ in context.close(promise: nil) }
        }

        /// A fixed page: nothing from the request is echoed, so nothing can be injected into it.
        static func page(title: String, body: String) -> String {
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>Latchkey</title></head>"
                + "<body style=\"font-family:sans-serif;margin:3em\"><h1>\(title)</h1><p>\(body)</p></body></html>"
        }
    }
}

extension OAuthClient.LoopbackHost {
    /// The addresses a browser may connect to for a redirect URI with this host.
    var listenAddresses: [String] {
        switch self {
        case .ipv4: return ["127.0.0.1"]
        case .ipv6: return ["::1"]
        case .localhost: return ["127.0.0.1", "::1"]
        }
    }
}

public enum LoopbackListenerError: LatchkeyError, Equatable {
    case cannotBind(String)

    public var category: FailureCategory { .unavailable }

    public var description: String {
        switch self {
        case .cannotBind(let reason):
            return "cannot listen on the loopback interface (\(reason)); use `latchkey login --paste` or `--device` instead"
        }
    }
}
