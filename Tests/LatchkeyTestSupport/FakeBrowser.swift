public import Foundation
public import LatchkeyOAuth
public import LatchkeyProviders
import Synchronization

/// A browser that records the URLs it was sent to, and can refuse to start like a machine with none.
public final class FakeBrowser: Browser {
    private let opened = Mutex<[URL]>([])
    private let unavailable: Bool

    public init(unavailable: Bool = false) { self.unavailable = unavailable }

    public var urls: [URL] { opened.withLock { $0 } }

    public func open(_ url: URL) throws(BrowserLaunchError) {
        if unavailable { throw .noBrowser("xdg-open: not found") }
        opened.withLock { $0.append(url) }
    }
}

/// Redirect listeners that are given their request by the test instead of by a socket.
///
/// `respond` sees the authorization URL the browser was sent to (the latest one opened by
/// `browser`) and returns the redirect request the "person" comes back with, or nil for a time-out.
/// What the browser was then told is in `answers`.
public struct ScriptedListenerFactory: RedirectListenerFactory {
    public let browser: FakeBrowser
    public let port: Int
    public let respond: @Sendable (URL) -> RedirectRequest?
    private let answered = Answers()

    public init(browser: FakeBrowser, port: Int = 49_321, respond: @escaping @Sendable (URL) -> RedirectRequest?) {
        self.browser = browser
        self.port = port
        self.respond = respond
    }

    /// The pages the browser was given, in order: one per redirect the sign-in judged.
    public var answers: [BrowserAnswer] { answered.list.withLock { $0 } }

    public func bind(path: String, host: OAuthClient.LoopbackHost, ports: [Int]) async throws -> any RedirectListener {
        ScriptedListener(factory: self)
    }

    private final class Answers: Sendable {
        let list = Mutex<[BrowserAnswer]>([])
    }

    struct ScriptedListener: RedirectListener {
        let factory: ScriptedListenerFactory
        var port: Int { factory.port }
        var addresses: [String] { ["127.0.0.1:\(factory.port)"] }

        func awaitRedirect(timeout: Duration) async -> RedirectRequest? {
            guard let url = factory.browser.urls.last else { return nil }
            return factory.respond(url)
        }

        func answer(_ answer: BrowserAnswer) async {
            factory.answered.list.withLock { $0.append(answer) }
        }

        func close() async {}
    }
}
