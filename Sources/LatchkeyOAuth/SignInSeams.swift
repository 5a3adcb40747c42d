public import Foundation
public import LatchkeyProviders

/// Opens the authorization URL where the person signs in: the system browser in use, a
/// scripted user agent in tests.
public protocol Browser: Sendable {
    /// Starts the browser without waiting for it; throws when none can be started.
    func open(_ url: URL) throws(BrowserLaunchError)
}

/// Receives the authorization response (RFC 8252 §7.3) at the redirect path it was bound for.
public protocol RedirectListener: Sendable {
    var port: Int { get }
    /// The addresses listened on, for the screen ("127.0.0.1:PORT and [::1]:PORT").
    var addresses: [String] { get }
    /// The first request at the redirect path (others were answered 404), or `nil` when
    /// `timeout` ran out (or the wait was cancelled). Its browser waits for `answer`.
    func awaitRedirect(timeout: Duration) async -> RedirectRequest?
    /// Tells the browser that sent the redirect whether the sign-in accepted it.
    func answer(_ answer: BrowserAnswer) async
    /// Stops listening, answering a browser still waiting; safe to call more than once.
    func close() async
}

/// What the browser that delivered the redirect is told once the sign-in has checked it.
public enum BrowserAnswer: Sendable, Equatable {
    /// The sign-in goes on: the page says to return to the terminal.
    case accepted
    /// The response was refused: the page says so and points at the terminal, which says why.
    case refused
}

/// Binds redirect listeners: the loopback interface in use, an in-memory queue in tests.
public protocol RedirectListenerFactory: Sendable {
    /// A listener for `path`, reachable at every address of `host`, on the first free of
    /// `ports` (any port when empty).
    func bind(path: String, host: OAuthClient.LoopbackHost, ports: [Int]) async throws -> any RedirectListener
}

/// Binds `LoopbackListener`s on 127.0.0.1 and [::1].
public struct LoopbackListenerFactory: RedirectListenerFactory {
    public init() {}

    public func bind(path: String, host: OAuthClient.LoopbackHost, ports: [Int]) async throws -> any RedirectListener {
        try await LoopbackListener.bind(path: path, host: host, ports: ports)
    }
}

extension LoopbackListener: RedirectListener {}
extension BrowserLauncher: Browser {}
