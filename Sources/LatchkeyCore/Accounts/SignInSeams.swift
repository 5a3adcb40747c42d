public import Foundation

/// Opens the authorization URL where the person signs in: the system browser in use, a
/// scripted user agent in tests.
public protocol Browser: Sendable {
    /// Starts the browser without waiting for it; throws when none can be started.
    func open(_ url: URL) throws(BrowserLaunchError)
}

/// Receives the authorization response (RFC 8252 §7.3) on the port it was bound to.
public protocol RedirectListener: Sendable {
    var port: Int { get }
    /// The addresses listened on, for the screen ("127.0.0.1:PORT and [::1]:PORT").
    var addresses: [String] { get }
    /// The first request, or `nil` when `timeout` ran out (or the wait was cancelled).
    func firstRequest(timeout: Duration) async -> RedirectRequest?
    /// Stops listening; safe to call more than once.
    func close() async
}

/// Binds redirect listeners: the loopback interface in use, an in-memory queue in tests.
public protocol RedirectListenerFactory: Sendable {
    /// A listener reachable at every address of `host`, on the first free of `ports` (any port when empty).
    func bind(host: OAuthClient.LoopbackHost, ports: [Int]) async throws -> any RedirectListener
}

/// Binds `LoopbackListener`s on 127.0.0.1 and [::1].
public struct LoopbackListenerFactory: RedirectListenerFactory {
    public init() {}

    public func bind(host: OAuthClient.LoopbackHost, ports: [Int]) async throws -> any RedirectListener {
        try await LoopbackListener.bind(host: host, ports: ports)
    }
}

extension LoopbackListener: RedirectListener {}
extension BrowserLauncher: Browser {}
