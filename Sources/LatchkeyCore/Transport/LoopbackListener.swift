import Foundation
public import LatchkeyVault
import LoopbackHTTP
import Synchronization

/// The loopback redirect listener (RFC 8252 §7.3): bound before the browser opens, on 127.0.0.1
/// and [::1] at one ephemeral port, answering exactly one request and then closing.
///
/// The listener does not judge requests itself: the first request is handed to `decide`, the
/// browser gets a page saying whether to look at the terminal, and the listener stops. A stray
/// request at another path therefore ends the sign-in instead of being silently skipped, which is
/// what makes a response for another provider impossible to slip in later.
public final class LoopbackListener: Sendable {
    private let server: LoopbackHTTPServer
    private let slot: RedirectSlot

    private init(server: LoopbackHTTPServer, slot: RedirectSlot) {
        self.server = server
        self.slot = slot
    }

    /// Binds every address the redirect URI's host can reach (`127.0.0.1`, `[::1]`, or both for
    /// `localhost`) on one port: the first of `ports` free on all of them, or a free ephemeral
    /// one when `ports` is empty; never only some of them.
    public static func bind(
        host: OAuthClient.LoopbackHost = .ipv4, ports: [Int] = []
    ) async throws(LoopbackListenerError) -> LoopbackListener {
        let slot = RedirectSlot()
        do {
            // A redirect is a GET: a small cap on bodies is plenty.
            let server = try await LoopbackHTTPServer.bind(addresses: host.listenAddresses, ports: ports, maximumBodyBytes: 16 << 10) {
                slot.handle($0)
            }
            return LoopbackListener(server: server, slot: slot)
        } catch {
            throw .cannotBind(
                ports.isEmpty ? error.reason : "none of loopback_port \(ports.map(String.init).joined(separator: ", ")) is free")
        }
    }

    public var port: Int { server.port }

    /// The addresses listened on, for the screen ("listening on 127.0.0.1:PORT and [::1]:PORT").
    public var addresses: [String] { server.addresses }

    /// Waits for the first request, up to `timeout`; `nil` when the time ran out.
    public func firstRequest(timeout: Duration) async -> RedirectRequest? {
        await slot.awaitRequest(timeout: timeout)
    }

    /// Stops listening; safe to call more than once.
    public func close() async {
        slot.finish(with: nil)
        await server.close()
    }
}

/// The one request a listener takes and its waiter.
private final class RedirectSlot: Sendable {
    private struct State {
        var request: RedirectRequest?
        var waiter: CheckedContinuation<RedirectRequest?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    /// Answers the one request, records it, and refuses everything after it.
    func handle(_ request: LoopbackHTTPRequest) -> LoopbackHTTPResponse {
        let taken = finish(with: RedirectRequest(target: request.target, host: request.header("Host")))
        return taken
            ? Self.page(
                status: 200, title: "Return to the terminal",
                body: "Latchkey received the browser's answer. You can close this tab and return to the terminal.")
            : Self.page(status: 410, title: "Nothing to do", body: "Latchkey is not waiting for a sign-in here any more.")
    }

    func awaitRequest(timeout: Duration) async -> RedirectRequest? {
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            finish(with: nil)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done: RedirectRequest?? = state.withLock { state in
                    if state.finished { return .some(state.request) }
                    state.waiter = continuation
                    return .none
                }
                if let done { continuation.resume(returning: done) }
            }
        } onCancel: {
            finish(with: nil)
        }
    }

    /// Ends the wait with `request` unless it already ended; true when this call ended it.
    @discardableResult
    func finish(with request: RedirectRequest?) -> Bool {
        let (ended, waiter): (Bool, CheckedContinuation<RedirectRequest?, Never>?) = state.withLock { state in
            guard !state.finished else { return (false, nil) }
            state.finished = true
            state.request = request
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(returning: request)
        return ended
    }

    /// A fixed page: nothing from the request is echoed, so nothing can be injected into it.
    static func page(status: Int, title: String, body: String) -> LoopbackHTTPResponse {
        let page =
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>Latchkey</title></head>"
            + "<body style=\"font-family:sans-serif;margin:3em\"><h1>\(title)</h1><p>\(body)</p></body></html>"
        return LoopbackHTTPResponse(
            status: status,
            headers: [
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer"),
                ("Connection", "close"),
            ],
            body: Array(page.utf8))
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
