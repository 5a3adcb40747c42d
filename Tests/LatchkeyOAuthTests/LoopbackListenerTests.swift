import Foundation
import Synchronization
import Testing

@testable import LatchkeyOAuth
@testable import LatchkeyProviders

@Suite("The loopback redirect listener (RFC 8252 §7.3)")
struct LoopbackListenerTests {
    @Test("the listener binds an ephemeral port on the IPv4 loopback address")
    func binds() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path)
        let addresses = listener.addresses
        await listener.close()
        #expect(listener.port > 0)
        #expect(addresses.contains("127.0.0.1:\(listener.port)"))
        #expect(addresses.allSatisfy { $0.hasPrefix("127.0.0.1:") || $0.hasPrefix("[::1]:") })
    }

    @Test("for localhost the listener binds 127.0.0.1 and [::1] on the same port, never only one")
    func localhostBindsBothFamilies() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path, host: .localhost)
        let addresses = listener.addresses
        await listener.close()
        #expect(Set(addresses) == ["127.0.0.1:\(listener.port)", "[::1]:\(listener.port)"])
    }

    @Test("for localhost a port free on one family but taken on the other is skipped, not half-bound")
    func localhostSkipsAHalfFreePort() async throws {
        // Something else holds [::1]:P; 127.0.0.1:P is free.
        let squatter = try await LoopbackListener.bind(path: Self.path, host: .ipv6)
        let port = squatter.port
        let fixed = try await LoopbackListener.bind(
            path: Self.path, host: .localhost, ports: [port, 0].filter { $0 != 0 } + [try Self.freePort()])
        let addresses = fixed.addresses
        await fixed.close()
        await squatter.close()
        #expect(fixed.port != port)
        #expect(addresses.count == 2)
    }

    @Test("with registered ports the first free one is taken, and none free is an error naming them")
    func registeredPorts() async throws {
        let taken = try await LoopbackListener.bind(path: Self.path)
        let free = try Self.freePort()
        let listener = try await LoopbackListener.bind(path: Self.path, host: .ipv4, ports: [taken.port, free])
        #expect(listener.port == free)
        await listener.close()
        await #expect(throws: LoopbackListenerError.self) {
            try await LoopbackListener.bind(path: Self.path, host: .ipv4, ports: [taken.port])
        }
        await taken.close()
    }

    /// A port that was free a moment ago on both loopback families.
    static func freePort() throws -> Int {
        for _ in 0..<20 {
            let port = Int.random(in: 40_000...60_000)
            let ipv4 = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(ipv4) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Foundation.bind(ipv4, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound == 0 { return port }
        }
        throw CancellationError()
    }

    static let path = "/oauth2redirect/example"

    /// A GET from a "browser" that records when its answer came.
    final class Browser: Sendable {
        private final class Flag: Sendable { let raised = Mutex(false) }
        private let flag = Flag()
        let task: Task<RawHTTPClient.Response?, Never>

        init(port: Int, target: String, host: String? = nil) {
            let flag = self.flag
            task = Task {
                let response = await RawHTTPClient.get(port: port, target: target, host: host ?? "127.0.0.1:\(port)")
                flag.raised.withLock { $0 = true }
                return response
            }
        }

        var answered: Bool { flag.raised.withLock { $0 } }
        var response: RawHTTPClient.Response? { get async { await task.value } }
    }

    @Test("a request at another path gets a 404 with a fixed page, and the listener goes on waiting for its own path")
    func otherPathsGet404() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path)
        let canary = "canary-\(UUID().uuidString)"
        let stray = await RawHTTPClient.get(port: listener.port, target: "/oauth2redirect/other?code=\(canary)", host: "127.0.0.1")
        let favicon = await RawHTTPClient.get(port: listener.port, target: "/favicon.ico", host: "127.0.0.1:\(listener.port)")
        let browser = Browser(port: listener.port, target: Self.path + "?code=right")
        let request = await listener.awaitRedirect(timeout: .seconds(10))
        await listener.answer(.accepted)
        let response = await browser.response
        await listener.close()

        #expect(stray?.status == 404 && favicon?.status == 404)
        #expect(stray?.body.contains("nothing here") == true)
        #expect(stray?.body.contains(canary) == false && stray?.head.contains(canary) == false)
        #expect(request?.target == Self.path + "?code=right")
        #expect(response?.status == 200)
    }

    @Test("the browser's page waits for the verdict, then says to return to the terminal, echoing nothing")
    func acceptedAfterVerdict() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path)
        let canary = "canary-\(UUID().uuidString)"
        let target = Self.path + "?code=\(canary)-code&state=%3Cscript%3E"
        let browser = Browser(port: listener.port, target: target)
        let request = try #require(await listener.awaitRedirect(timeout: .seconds(10)))
        try await Task.sleep(for: .milliseconds(300))
        let answeredEarly = browser.answered
        await listener.answer(.accepted)
        let response = try #require(await browser.response)
        await listener.close()

        #expect(!answeredEarly, "the browser was answered before the sign-in judged its request")
        #expect(request.target == target)
        #expect(request.host == "127.0.0.1:\(listener.port)")
        #expect(response.status == 200)
        #expect(response.body.contains("Return to the terminal"))
        #expect(!response.body.contains(canary) && !response.head.contains(canary))
        #expect(!response.body.contains("script"))
        #expect(response.head.lowercased().contains("cache-control: no-store"))
    }

    @Test("a refused redirect gets a fixed page saying so and pointing at the terminal, echoing nothing")
    func refusedAfterVerdict() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path)
        let canary = "canary-\(UUID().uuidString)"
        let browser = Browser(port: listener.port, target: Self.path + "?error=%3Cb%3E\(canary)&error_description=\(canary)")
        _ = try #require(await listener.awaitRedirect(timeout: .seconds(10)))
        await listener.answer(.refused)
        let response = try #require(await browser.response)
        await listener.close()

        #expect(response.status == 403)
        #expect(response.body.contains("refused") && response.body.contains("terminal"))
        #expect(!response.body.contains(canary) && !response.body.contains("<b>"))
    }

    @Test("the listener does not judge the request: a foreign Host at the path is handed over for validation")
    func foreignHostHandedOver() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path)
        let browser = Browser(port: listener.port, target: Self.path, host: "evil.example")
        let request = try #require(await listener.awaitRedirect(timeout: .seconds(10)))
        await listener.answer(.refused)
        #expect(await browser.response?.status == 403)
        await listener.close()
        #expect(request.target == Self.path)
        #expect(request.host == "evil.example")
    }

    @Test("a browser left waiting gets its page at its own deadline, and when the listener closes")
    func heldBrowserIsNotLeftHanging() async throws {
        let quick = try await LoopbackListener.bind(path: Self.path, answerWithin: .milliseconds(200))
        let first = Browser(port: quick.port, target: Self.path)
        _ = await quick.awaitRedirect(timeout: .seconds(10))
        #expect(await first.response?.status == 503)
        await quick.close()

        let patient = try await LoopbackListener.bind(path: Self.path, answerWithin: .seconds(600))
        let second = Browser(port: patient.port, target: Self.path)
        _ = await patient.awaitRedirect(timeout: .seconds(10))
        await patient.close()
        let response = await second.response
        #expect(response?.status == 503)
        #expect(response?.body.contains("terminal") == true)
    }

    @Test("a second request at the path is answered 410 Gone, and does not replace the first")
    func secondRequest() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path)
        let first = Browser(port: listener.port, target: Self.path + "?code=first")
        let request = await listener.awaitRedirect(timeout: .seconds(5))
        let second = await RawHTTPClient.get(port: listener.port, target: Self.path + "?code=second", host: "127.0.0.1:\(listener.port)")
        await listener.answer(.accepted)
        #expect(await first.response?.status == 200)
        #expect(await listener.awaitRedirect(timeout: .seconds(5))?.target == Self.path + "?code=first")
        await listener.close()
        #expect(request?.target == Self.path + "?code=first")
        #expect(second?.status == 410)
        #expect(second?.body.contains("second") == false)
    }

    @Test("waiting with no request returns nil when the time runs out")
    func timeout() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path)
        let clock = ContinuousClock()
        let started = clock.now
        let request = await listener.awaitRedirect(timeout: .milliseconds(200))
        let elapsed = clock.now - started
        await listener.close()
        #expect(request == nil)
        #expect(elapsed >= .milliseconds(150))
        // Without the deadline it would wait for ever; the bound leaves room for a loaded machine.
        #expect(elapsed < .seconds(30))
    }

    @Test("after close nothing is waited for and the port no longer answers")
    func closed() async throws {
        let listener = try await LoopbackListener.bind(path: Self.path)
        await listener.close()
        await listener.close()
        #expect(await listener.awaitRedirect(timeout: .seconds(10)) == nil)
        #expect(await RawHTTPClient.get(port: listener.port, target: Self.path, host: "127.0.0.1:\(listener.port)") == nil)
    }
}
