import Foundation
import LatchkeySupport
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyMCP

/// `mcp proxy` against a server in memory: what it does with a 401, a DPoP nonce, a request for
/// more scope and an event stream, without a network.
@Suite("The MCP proxy, against an in-memory Streamable HTTP server")
struct MCPProxyTests {
    static let url = URL(string: "https://mcp.example.com/mcp")!

    /// One answer of the in-memory server: its status, headers and body, the body in pieces.
    struct Reply: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var pieces: [String] = []

        static func json(_ text: String) -> Reply { Reply(status: 200, headers: [("Content-Type", "application/json")], pieces: [text]) }
    }

    /// The server: `answer` gets each request and how many came before it.
    final class Server: StreamingHTTPTransport {
        let answer: @Sendable (HTTPRequest, Int) -> Reply
        private let received = Mutex<[HTTPRequest]>([])

        init(_ answer: @escaping @Sendable (HTTPRequest, Int) -> Reply) { self.answer = answer }

        var requests: [HTTPRequest] { received.withLock { $0 } }
        var posts: [HTTPRequest] { requests.filter { $0.method == .post } }

        func stream(_ request: HTTPRequest, receive: @escaping @Sendable (HTTPResponsePart) -> Bool) async throws(TransportError)
            -> HTTPResponse
        {
            let count = received.withLock { requests in
                requests.append(request)
                return requests.count - 1
            }
            let reply = answer(request, count)
            guard receive(.head(status: reply.status, headers: reply.headers)) else { return HTTPResponse(status: reply.status, body: []) }
            for piece in reply.pieces where !receive(.body(Array(piece.utf8))) { break }
            return HTTPResponse(status: reply.status, body: [])
        }

        func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
            try await stream(request) { _ in true }
        }

        func send(_ request: HTTPRequest, within deadline: Duration) async throws(TransportError) -> HTTPResponse {
            try await send(request)
        }
    }

    /// The account's side: a new token each time the refused headers are named, and what was
    /// asked of it.
    final class Credentials: MCPProxyCredentials {
        struct Asked: Sendable {
            var refused: String?
            var nonce: String?
        }

        private let state = Mutex<(token: Int, asked: [Asked], scopes: [[String]])>((1, [], []))
        let refuseNewToken: Bool

        init(refuseNewToken: Bool = false) { self.refuseNewToken = refuseNewToken }

        var asked: [Asked] { state.withLock { $0.asked } }
        var scopesAsked: [[String]] { state.withLock { $0.scopes } }

        func authorization(method: String, url: URL, refused: [(String, String)]?, nonce: String?) async throws -> [(String, String)] {
            let refusedToken = refused?.first { $0.0 == "Authorization" }?.1
            if refusedToken != nil && refuseNewToken {
                throw MCPProxyError.noToken(reason: "refreshed moments ago")
            }
            let token = state.withLock { state in
                state.asked.append(Asked(refused: refusedToken, nonce: nonce))
                if refusedToken != nil { state.token += 1 }
                return state.token
            }
            return [("Authorization", "Bearer token-\(token)")] + (nonce.map { [("DPoP", "proof-with-\($0)")] } ?? [])
        }

        func signInAgain(adding scopes: [String]) async throws {
            state.withLock { $0.scopes.append(scopes) }
        }
    }

    /// Runs the proxy over `messages` (one JSON-RPC message each) until it ends; the lines it
    /// wrote for the client and its failure.
    static func run(_ messages: [String], server: Server, credentials: Credentials) async -> (lines: [String], failure: MCPProxyError?) {
        let written = Mutex<[String]>([])
        let proxy = MCPProxy(
            url: url, credentials: credentials, transport: server,
            write: { line in written.withLock { $0.append(String(decoding: line, as: UTF8.self)) } },
            log: { _ in })
        let (input, feed) = AsyncStream.makeStream(of: [UInt8].self)
        for message in messages { feed.yield(Array(message.utf8)) }
        feed.finish()
        let failure = await proxy.run(input)
        return (written.withLock { $0 }, failure)
    }

    static let request = #"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#
    static let result = #"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#

    @Test("a 401 asks for another token once, naming the refused one, and the request goes again with it")
    func refusedOnce() async throws {
        let server = Server { request, _ in
            request.header("Authorization") == "Bearer token-1" ? Reply(status: 401) : .json(Self.result)
        }
        let credentials = Credentials()
        let (lines, failure) = await Self.run([Self.request], server: server, credentials: credentials)
        #expect(failure == nil && lines == [Self.result])
        #expect(credentials.asked.map(\.refused) == [nil, "Bearer token-1"])
        #expect(server.posts.map { $0.header("Authorization") } == ["Bearer token-1", "Bearer token-2"])
    }

    @Test("a 401 to the new token too answers the request with an error; no third token is asked for")
    func refusedTwice() async throws {
        let server = Server { _, _ in Reply(status: 401) }
        let credentials = Credentials()
        let (lines, failure) = await Self.run([Self.request], server: server, credentials: credentials)
        #expect(failure == nil)
        #expect(lines.count == 1 && lines[0].contains(#""id":7"#) && lines[0].contains("refused a new token too"))
        #expect(credentials.asked.count == 2 && server.posts.count == 2)
    }

    @Test("when no new token is given after a 401 (refreshed moments ago), that request is answered with the reason and the proxy goes on")
    func noNewToken() async throws {
        let server = Server { request, _ in
            request.body.map { String(decoding: $0, as: UTF8.self) }?.contains(#""id":8"#) == true
                ? .json(#"{"jsonrpc":"2.0","id":8,"result":{}}"#) : Reply(status: 401)
        }
        let (lines, failure) = await Self.run(
            [Self.request, #"{"jsonrpc":"2.0","id":8,"method":"ping"}"#], server: server, credentials: Credentials(refuseNewToken: true))
        #expect(failure == nil)
        #expect(lines.contains { $0.contains(#""id":7"#) && $0.contains("no new one is given") && $0.contains("refreshed moments ago") })
        #expect(lines.contains(#"{"jsonrpc":"2.0","id":8,"result":{}}"#))
    }

    @Test("a 401 with a new DPoP-Nonce goes again with a proof for that nonce, not with a new token")
    func nonce() async throws {
        let server = Server { request, count in
            count == 0 ? Reply(status: 401, headers: [("DPoP-Nonce", "n-2")]) : .json(Self.result)
        }
        let credentials = Credentials()
        let (lines, failure) = await Self.run([Self.request], server: server, credentials: credentials)
        #expect(failure == nil && lines == [Self.result])
        #expect(credentials.asked.map(\.refused) == [nil, nil] && credentials.asked.map(\.nonce) == [nil, "n-2"])
        #expect(server.posts.last?.header("DPoP") == "proof-with-n-2")
    }

    @Test("a 403 insufficient_scope asks for those scopes once, then goes again; a second one answers the request with an error")
    func moreScope() async throws {
        let forbidden = Reply(status: 403, headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="tools:write""#)])
        let once = Server { _, count in count == 0 ? forbidden : .json(Self.result) }
        let credentials = Credentials()
        let (lines, _) = await Self.run([Self.request], server: once, credentials: credentials)
        #expect(lines == [Self.result] && credentials.scopesAsked == [["tools:write"]])

        let always = Server { _, _ in forbidden }
        let again = Credentials()
        let (refused, _) = await Self.run([Self.request], server: always, credentials: again)
        #expect(again.scopesAsked == [["tools:write"]], "one sign-in per request, whatever the server says")
        #expect(refused.count == 1 && refused[0].contains("still asks for tools:write"))
    }

    @Test("a scope that is no scope-token (RFC 6749 §3.3) is not asked for: the 403 is the request's answer")
    func badScope() async throws {
        let server = Server { _, _ in
            Reply(status: 403, headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="a\"b c""#)])
        }
        let credentials = Credentials()
        let (lines, _) = await Self.run([Self.request], server: server, credentials: credentials)
        #expect(credentials.scopesAsked.isEmpty && lines.count == 1 && lines[0].contains("HTTP 403"))
    }

    @Test("an event stream's messages are passed on one by one as they arrive, split anywhere, and the request is answered once")
    func eventStream() async throws {
        let progress = #"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#
        let server = Server { _, _ in
            Reply(
                status: 200, headers: [("Content-Type", "text/event-stream")],
                pieces: ["event: message\ndata: \(progress)\n", "\nevent: mess", "age\ndata: \(Self.result)\n\n"])
        }
        let (lines, failure) = await Self.run([Self.request], server: server, credentials: Credentials())
        #expect(failure == nil && lines == [progress, Self.result])
    }

    @Test("an event that is no JSON-RPC message ends the proxy, answering what waits with an error")
    func garbageEvent() async throws {
        let server = Server { _, _ in
            Reply(status: 200, headers: [("Content-Type", "text/event-stream")], pieces: ["event: message\ndata: {not json\n\n"])
        }
        let (lines, failure) = await Self.run([Self.request], server: server, credentials: Credentials())
        guard case .garbage? = failure else { Issue.record("no garbage failure: \(String(describing: failure))"); return }
        #expect(lines.count == 1 && lines[0].contains(#""id":7"#) && lines[0].contains("no JSON-RPC message"))
    }
}
