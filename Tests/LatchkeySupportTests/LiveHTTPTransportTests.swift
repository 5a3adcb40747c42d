import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeySupport

/// The live transport (libcurl) against real servers on loopback: a TLS server with a
/// self-signed certificate, and raw-socket servers that misbehave on purpose.
@Suite("The live HTTP transport")
struct LiveHTTPTransportTests {
    static func get(_ url: String, deadline: Duration = .seconds(45)) async -> Result<HTTPResponse, TransportError> {
        do {
            return .success(try await LiveHTTPTransport(deadline: deadline).send(HTTPRequest(method: .get, url: URL(string: url)!)))
        } catch {
            return .failure(error)
        }
    }

    @Test("a server with a self-signed certificate is refused with a TLS error")
    func selfSignedRefused() async throws {
        let server = try await SelfSignedTLSServer.start()
        defer { server.stop() }
        let result = await Self.get("https://127.0.0.1:\(server.port)/")
        guard case .failure(.unreachable(let host, let reason)) = result else {
            Issue.record("expected the TLS connection to be refused, got \(result)")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(reason.contains("TLS"), "\(reason)")
        #expect(reason.contains("certificate"), "\(reason)")
    }

    @Test("a body that never ends is cut off at the cap while it is read, not at the deadline")
    func endlessBodyCutOff() async throws {
        let server = try RawHTTPServer { connection in
            RawHTTPServer.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n", to: connection)
            let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 64 << 10)
            while RawHTTPServer.write(chunk, to: connection) {}
        }
        defer { server.stop() }
        // Checked only after the body, the answer would be a time-out.
        let result = await Self.get("http://127.0.0.1:\(server.port)/jwks", deadline: .seconds(60))
        #expect(result.failure == .responseTooLarge(host: "127.0.0.1", limit: LiveHTTPTransport.responseLimit))
    }

    @Test("a declared length over the cap is refused before the body is read")
    func declaredLengthRefused() async throws {
        let server = try RawHTTPServer { connection in
            RawHTTPServer.write("HTTP/1.1 200 OK\r\nContent-Length: \((1 << 20) + 1)\r\nConnection: close\r\n\r\n", to: connection)
            RawHTTPServer.waitForClose(connection)
        }
        defer { server.stop() }
        let result = await Self.get("http://127.0.0.1:\(server.port)/", deadline: .seconds(20))
        #expect(result.failure == .responseTooLarge(host: "127.0.0.1", limit: LiveHTTPTransport.responseLimit))
    }

    @Test("a response up to the cap arrives whole, with its status and headers")
    func responseAtTheCap() async throws {
        let body = [UInt8](repeating: UInt8(ascii: "b"), count: LiveHTTPTransport.responseLimit)
        let server = try RawHTTPServer { connection in
            RawHTTPServer.write("HTTP/1.1 201 Created\r\nX-Answer: 42\r\nContent-Length: \(body.count)\r\n\r\n", to: connection)
            RawHTTPServer.write(body, to: connection)
        }
        defer { server.stop() }
        let response = try await LiveHTTPTransport().send(HTTPRequest(method: .get, url: URL(string: "http://127.0.0.1:\(server.port)/")!))
        #expect(response.status == 201)
        #expect(response.body == body)
        #expect(response.headers.contains { $0.0 == "X-Answer" && $0.1 == "42" })
        let head = try #require(server.requests.first)
        #expect(head.hasPrefix("GET / HTTP/1.1\r\n"))
        #expect(head.contains("User-Agent: latchkey/\(LatchkeyVersion.current)\r\n"))
    }

    @Test("a redirect is returned as it is, never followed")
    func redirectNotFollowed() async throws {
        let server = try RawHTTPServer { connection in
            RawHTTPServer.write(
                "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", to: connection)
        }
        defer { server.stop() }
        let response = try await LiveHTTPTransport().send(
            HTTPRequest.form(URL(string: "http://127.0.0.1:\(server.port)/token")!, [("grant_type", "refresh_token")]))
        #expect(response.status == 302)
        #expect(response.headers.contains { $0.0 == "Location" && $0.1 == "/elsewhere" })
        #expect(server.requests.count == 1)
        #expect(server.requests.first?.hasPrefix("POST /token ") == true)
    }

    @Test("a server that never answers hits the request's deadline")
    func slowServerTimesOut() async throws {
        let server = try RawHTTPServer { RawHTTPServer.waitForClose($0) }
        defer { server.stop() }
        let clock = ContinuousClock()
        let started = clock.now
        let result = await Self.get("http://127.0.0.1:\(server.port)/", deadline: .seconds(1))
        #expect(result.failure == .timedOut(host: "127.0.0.1"))
        #expect(clock.now - started >= .milliseconds(900))
    }

    @Test("cancelling the task ends the request long before its deadline")
    func cancellation() async throws {
        let server = try RawHTTPServer { RawHTTPServer.waitForClose($0) }
        defer { server.stop() }
        // Not cancelled, it would end at the deadline as a time-out.
        let request = Task { await Self.get("http://127.0.0.1:\(server.port)/", deadline: .seconds(120)) }
        try await Task.sleep(for: .milliseconds(200))
        request.cancel()
        let result = await request.value
        #expect(result.failure == .unreachable(host: "127.0.0.1", reason: "the request was cancelled"))
    }

    @Test("a header whose name or value would split the request is refused before anything is sent")
    func splittingHeaderRefused() async throws {
        let server = try RawHTTPServer { RawHTTPServer.write("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", to: $0) }
        defer { server.stop() }
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/register/1"))
        let headers = [
            ("Authorization", "Bearer fake\r\nX-Injected: 1"), ("Authorization", "Bearer fake\nX-Injected: 1"),
            ("Authorization", "Bearer fake\u{0}tail"), ("X-Bad\r\nX-Injected", "1"), ("X Spaced", "1"), ("X:Colon", "1"), ("", "1"),
        ]
        for header in headers {
            do {
                _ = try await LiveHTTPTransport().send(HTTPRequest(method: .delete, url: url, headers: [header]))
                Issue.record("a request with the header \(header.0.debugDescription) was sent")
            } catch {
                guard case .splittingHeader = error else {
                    Issue.record("expected a refused header, got \(error)")
                    continue
                }
                #expect(!error.description.contains("X-Injected: 1") && !error.description.contains("\n"))
            }
        }
        #expect(server.requests.isEmpty)
        let response = try await LiveHTTPTransport().send(
            HTTPRequest(method: .delete, url: url, headers: [("Authorization", "Bearer fake-ok")]))
        #expect(response.status == 204 && server.requests.count == 1)
    }

    @Test("plain http to a host other than loopback is refused before anything is sent")
    func insecureRefused() async {
        let result = await Self.get("http://example.com/token")
        #expect(result.failure == .insecureURL("http://example.com/token"))
    }

    @Test("loopback is never sent through a proxy; no_proxy's own hosts are kept")
    func noProxy() {
        #expect(LiveHTTPTransport.noProxy(inherited: nil) == "localhost,127.0.0.1,::1,127.0.0.0/8")
        #expect(LiveHTTPTransport.noProxy(inherited: " ") == "localhost,127.0.0.1,::1,127.0.0.0/8")
        #expect(
            LiveHTTPTransport.noProxy(inherited: "corp.example,10.0.0.0/8") == "localhost,127.0.0.1,::1,127.0.0.0/8,corp.example,10.0.0.0/8"
        )
        #expect(LiveHTTPTransport.noProxy(inherited: "*") == "*")
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
