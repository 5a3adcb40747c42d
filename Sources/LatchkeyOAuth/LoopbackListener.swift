import Foundation
public import LatchkeyProviders
public import LatchkeyVault
import LoopbackHTTP
import Synchronization

/// The loopback redirect listener (RFC 8252 §7.3): bound before the browser opens, on 127.0.0.1
/// and/or [::1] at one port, for one provider's exact redirect path.
///
/// A request at any other path (another provider's, `/favicon.ico`, a port scanner) gets a 404
/// and the listener keeps waiting, so a stray request can neither end nor steer the sign-in. The
/// first request at the path is handed to the sign-in, and the browser's page is held until the
/// sign-in has judged it (`answer`): only then does the page say whether it was accepted. Every
/// page is fixed text; nothing from a request is echoed.
public final class LoopbackListener: Sendable {
    /// The redirect URI's path, exactly as sent in the authorization request.
    public let path: String
    private let server: LoopbackHTTPServer
    private let slot: RedirectSlot

    private init(path: String, server: LoopbackHTTPServer, slot: RedirectSlot) {
        self.path = path
        self.server = server
        self.slot = slot
    }

    /// Binds every address the redirect URI's host can reach (`127.0.0.1`, `[::1]`, or both for
    /// `localhost`) on one port: the first of `ports` free on all of them, or a free ephemeral
    /// one when `ports` is empty; never only some of them. A browser's page is held at most
    /// `answerWithin` for the sign-in's verdict.
    public static func bind(
        path: String, host: OAuthClient.LoopbackHost = .ipv4, ports: [Int] = [], answerWithin: Duration = .seconds(10)
    ) async throws(LoopbackListenerError) -> LoopbackListener {
        let slot = RedirectSlot(path: path, answerWithin: answerWithin)
        do {
            // A redirect is a GET: a small cap on bodies is plenty.
            let server = try await LoopbackHTTPServer.bind(
                addresses: host.listenAddresses, ports: ports, maximumBodyBytes: 16 << 10
            ) { await slot.handle($0) }
            return LoopbackListener(path: path, server: server, slot: slot)
        } catch {
            throw .cannotBind(
                ports.isEmpty ? error.reason : "none of loopback_port \(ports.map(String.init).joined(separator: ", ")) is free")
        }
    }

    public var port: Int { server.port }

    /// The addresses listened on, for the screen ("listening on 127.0.0.1:PORT and [::1]:PORT").
    public var addresses: [String] { server.addresses }

    /// Waits for the first request at `path`, up to `timeout`; `nil` when the time ran out or
    /// the wait was cancelled. The browser that sent it waits for `answer`.
    public func awaitRedirect(timeout: Duration) async -> RedirectRequest? {
        await slot.awaitRequest(timeout: timeout)
    }

    /// Sends the held browser its page: accepted ("return to the terminal") or refused.
    public func answer(_ answer: BrowserAnswer) async {
        slot.release(with: answer == .accepted ? .accepted : .refused)
    }

    /// Stops listening; a browser still held is told to look at the terminal. Safe to call
    /// more than once.
    public func close() async {
        slot.stop()
        await server.close()
    }
}

/// The one request a listener takes, its waiter, and the browser held for the verdict.
private final class RedirectSlot: Sendable {
    private struct State {
        var request: RedirectRequest?
        var waiter: CheckedContinuation<RedirectRequest?, Never>?
        var browser: CheckedContinuation<Page, Never>?
        /// No request at the path is taken any more (one was, the wait ended, or the listener closed).
        var closed = false
    }

    let path: String
    let answerWithin: Duration
    private let state = Mutex(State())

    init(path: String, answerWithin: Duration) {
        self.path = path
        self.answerWithin = answerWithin
    }

    func handle(_ request: LoopbackHTTPRequest) async -> LoopbackHTTPResponse {
        guard request.path == path else { return Page.notFound.response }
        let redirect = RedirectRequest(target: request.target, host: request.header("Host"))
        let page = await withCheckedContinuation { browser in
            let (taken, waiter): (Bool, CheckedContinuation<RedirectRequest?, Never>?) = state.withLock { state in
                guard !state.closed, state.request == nil else { return (false, nil) }
                state.request = redirect
                state.browser = browser
                defer { state.waiter = nil }
                return (true, state.waiter)
            }
            guard taken else { return browser.resume(returning: .gone) }
            waiter?.resume(returning: redirect)
            Task { [self] in
                try? await Task.sleep(for: answerWithin)
                release(with: .unanswered)
            }
        }
        return page.response
    }

    func awaitRequest(timeout: Duration) async -> RedirectRequest? {
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            endWait()
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: RedirectRequest?? = state.withLock { state in
                    if state.request != nil || state.closed { return .some(state.request) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            endWait()
        }
    }

    /// Answers the held browser, if any; later calls do nothing.
    func release(with page: Page) {
        state.withLock { state in
            defer { state.browser = nil }
            return state.browser
        }?.resume(returning: page)
    }

    /// The wait ran out or was cancelled: no request is taken any more, the waiter gets `nil`.
    private func endWait() {
        state.withLock { state in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume(returning: nil)
    }

    func stop() {
        endWait()
        release(with: .unanswered)
    }
}

/// The listener's pages: fixed text, so nothing from a request can be injected into them.
private enum Page {
    case notFound, accepted, refused, unanswered, gone

    var response: LoopbackHTTPResponse {
        let (status, title, text): (Int, String, String)
        switch self {
        case .notFound:
            (status, title, text) = (404, "Not found", "This address belongs to a Latchkey sign-in; there is nothing here.")
        case .accepted:
            (status, title, text) = (
                200, "Return to the terminal", "Latchkey received the sign-in response. You can close this tab and return to the terminal."
            )
        case .refused:
            (status, title, text) = (
                403, "Sign-in refused", "Latchkey refused this sign-in response. The terminal says why; you can close this tab."
            )
        case .unanswered:
            (status, title, text) = (
                503, "Look at the terminal",
                "Latchkey stopped before it had checked this sign-in response. The terminal says what happened."
            )
        case .gone:
            (status, title, text) = (410, "Nothing to do", "Latchkey is not waiting for a sign-in here any more.")
        }
        let page =
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>Latchkey</title></head>"
            + "<body style=\"font-family:sans-serif;margin:3em\"><h1>\(title)</h1><p>\(text)</p></body></html>"
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
