import Foundation
import Testing

@testable import LatchkeyCore

@Suite("The loopback redirect listener (RFC 8252 §7.3)")
struct LoopbackListenerTests {
    @Test("the listener binds an ephemeral port on the IPv4 loopback address")
    func binds() async throws {
        let listener = try await LoopbackListener.bind()
        let addresses = listener.addresses
        await listener.close()
        #expect(listener.port > 0)
        #expect(addresses.contains("127.0.0.1:\(listener.port)"))
        #expect(addresses.allSatisfy { $0.hasPrefix("127.0.0.1:") || $0.hasPrefix("[::1]:") })
    }

    @Test("the first request gets 200 and a fixed page, and is handed over with its target and Host")
    func firstRequest() async throws {
        let listener = try await LoopbackListener.bind()
        let canary = "canary-\(UUID().uuidString)"
        let target = "/oauth2redirect/\(canary)?code=\(canary)-code&state=%3Cscript%3E"
        async let received = listener.firstRequest(timeout: .seconds(10))
        let response = try #require(await RawHTTPClient.get(port: listener.port, target: target, host: "127.0.0.1:\(listener.port)"))
        let request = try #require(await received)
        await listener.close()

        #expect(response.status == 200)
        #expect(response.body.contains("Return to the terminal"))
        #expect(!response.body.contains(canary))
        #expect(!response.head.contains(canary))
        #expect(!response.body.contains("script"))
        #expect(response.head.lowercased().contains("cache-control: no-store"))
        #expect(request.target == target)
        #expect(request.host == "127.0.0.1:\(listener.port)")
    }

    @Test("the listener does not judge the request: a foreign Host is handed over for validation")
    func foreignHostHandedOver() async throws {
        let listener = try await LoopbackListener.bind()
        async let received = listener.firstRequest(timeout: .seconds(10))
        let response = await RawHTTPClient.get(port: listener.port, target: "/favicon.ico", host: "evil.example")
        let request = try #require(await received)
        await listener.close()
        #expect(response?.status == 200)
        #expect(request.target == "/favicon.ico")
        #expect(request.host == "evil.example")
    }

    @Test("a second request is refused or answered 410 Gone, and does not replace the first")
    func secondRequest() async throws {
        let listener = try await LoopbackListener.bind()
        let first = await RawHTTPClient.get(
            port: listener.port, target: "/oauth2redirect/example?code=first", host: "127.0.0.1:\(listener.port)")
        #expect(first?.status == 200)
        let second = await RawHTTPClient.get(
            port: listener.port, target: "/oauth2redirect/example?code=second", host: "127.0.0.1:\(listener.port)")
        if let second {
            #expect(second.status == 410)
            #expect(!second.body.contains("second"))
        }
        let request = await listener.firstRequest(timeout: .seconds(5))
        await listener.close()
        #expect(request?.target == "/oauth2redirect/example?code=first")
    }

    @Test("waiting with no request returns nil when the time runs out")
    func timeout() async throws {
        let listener = try await LoopbackListener.bind()
        let clock = ContinuousClock()
        let started = clock.now
        let request = await listener.firstRequest(timeout: .milliseconds(200))
        let elapsed = clock.now - started
        await listener.close()
        #expect(request == nil)
        #expect(elapsed >= .milliseconds(150))
        #expect(elapsed < .seconds(5))
    }

    @Test("after close nothing is waited for and the port no longer answers")
    func closed() async throws {
        let listener = try await LoopbackListener.bind()
        await listener.close()
        await listener.close()
        #expect(await listener.firstRequest(timeout: .seconds(10)) == nil)
        #expect(await RawHTTPClient.get(port: listener.port, target: "/", host: "127.0.0.1:\(listener.port)") == nil)
    }
}
