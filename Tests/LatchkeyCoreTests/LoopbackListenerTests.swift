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

    @Test("for localhost the listener binds 127.0.0.1 and [::1] on the same port, never only one")
    func localhostBindsBothFamilies() async throws {
        let listener = try await LoopbackListener.bind(host: .localhost)
        let addresses = listener.addresses
        await listener.close()
        #expect(Set(addresses) == ["127.0.0.1:\(listener.port)", "[::1]:\(listener.port)"])
    }

    @Test("for localhost a port free on one family but taken on the other is skipped, not half-bound")
    func localhostSkipsAHalfFreePort() async throws {
        // Something else holds [::1]:P; 127.0.0.1:P is free.
        let squatter = try await LoopbackListener.bind(host: .ipv6)
        let port = squatter.port
        let fixed = try await LoopbackListener.bind(host: .localhost, ports: [port, 0].filter { $0 != 0 } + [try Self.freePort()])
        let addresses = fixed.addresses
        await fixed.close()
        await squatter.close()
        #expect(fixed.port != port)
        #expect(addresses.count == 2)
    }

    @Test("with registered ports the first free one is taken, and none free is an error naming them")
    func registeredPorts() async throws {
        let taken = try await LoopbackListener.bind()
        let free = try Self.freePort()
        let listener = try await LoopbackListener.bind(host: .ipv4, ports: [taken.port, free])
        #expect(listener.port == free)
        await listener.close()
        await #expect(throws: LoopbackListenerError.self) { try await LoopbackListener.bind(host: .ipv4, ports: [taken.port]) }
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
        // Without the deadline it would wait for ever; the bound leaves room for a loaded machine.
        #expect(elapsed < .seconds(30))
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
