import Foundation
import Testing

@testable import LatchkeyMCP

@Suite("mcp proxy: the event stream reader (HTML Living Standard §9.2.6)")
struct ServerSentEventParserTests {
    @Test("an event is given once its blank line comes, with its type, data and id")
    func fields() throws {
        var parser = ServerSentEventParser(limit: 1024)
        #expect(try parser.feed(Array("event: message\nid: 7\ndata: {\"a\":1}\n".utf8)).isEmpty)
        #expect(try parser.feed(Array("\n".utf8)) == [.init(type: "message", data: #"{"a":1}"#, lastEventID: "7")])
    }

    @Test("data lines are joined with LF, one space after the colon is dropped and a value without one is kept whole")
    func multiLineData() throws {
        var parser = ServerSentEventParser(limit: 1024)
        let events = try parser.feed(Array("data: {\"a\":\ndata:  1}\ndata\n\n".utf8))
        #expect(events.map(\.data) == ["{\"a\":\n 1}\n"])
        #expect(events.first?.type == "message")
    }

    @Test("comments, retry and unknown fields give nothing, and a blank line without data dispatches nothing")
    func comments() throws {
        var parser = ServerSentEventParser(limit: 1024)
        #expect(try parser.feed(Array(": keep-alive\n\nretry: 10\nfoo: bar\nevent: x\n\n".utf8)).isEmpty)
        #expect(try parser.feed(Array("data: 1\n\n".utf8)) == [.init(data: "1")])
    }

    @Test("CRLF, CR and LF end lines alike, and a CRLF split between two pieces is one line end")
    func lineEnds() throws {
        var parser = ServerSentEventParser(limit: 1024)
        #expect(try parser.feed(Array("data: 1\r\n\r\ndata: 2\r\r".utf8)).map(\.data) == ["1", "2"])
        #expect(try parser.feed(Array("data: 3\r".utf8)).isEmpty)
        // The LF completes the CR above: it is not a blank line of its own.
        #expect(try parser.feed(Array("\ndata: 4\n\n".utf8)).map(\.data) == ["3\n4"])
    }

    @Test("an event arriving one byte at a time is given whole, a byte order mark first is dropped")
    func bytewise() throws {
        var parser = ServerSentEventParser(limit: 1024)
        var events: [ServerSentEventParser.Event] = []
        for byte in [0xEF, 0xBB, 0xBF] + Array("data: {\"id\":1}\n\n".utf8) { events += try parser.feed([UInt8(byte)]) }
        #expect(events == [.init(data: #"{"id":1}"#)])
    }

    @Test("a hostile endless line ends the stream at the limit instead of being held")
    func endlessLine() throws {
        var parser = ServerSentEventParser(limit: 4096)
        #expect(throws: ServerSentEventParser.Overflow(limit: 4096)) {
            for _ in 0..<100 { _ = try parser.feed([UInt8](repeating: UInt8(ascii: "a"), count: 1000)) }
        }
    }

    @Test("an event whose data lines add up past the limit ends the stream")
    func endlessEvent() {
        var parser = ServerSentEventParser(limit: 4096)
        let line = Array(("data: " + String(repeating: "b", count: 1000) + "\n").utf8)
        #expect(throws: ServerSentEventParser.Overflow(limit: 4096)) {
            for _ in 0..<10 { _ = try parser.feed(line) }
        }
    }
}

@Suite("mcp proxy: JSON-RPC messages and the session rules (MCP Streamable HTTP)")
struct MCPProxySessionTests {
    func message(_ text: String) throws -> JSONRPCMessage { try #require(JSONRPCMessage(Array(text.utf8))) }

    @Test("requests, notifications, responses and batches are told apart; string and number ids kept as written")
    func kinds() throws {
        #expect(try message(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).kinds == [.request(.number("1"), method: "ping")])
        #expect(try message(#"{"jsonrpc":"2.0","id":"a","method":"x"}"#).requestIDs == [.string("a")])
        #expect(
            try message(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).kinds == [
                .notification(method: "notifications/initialized")
            ])
        #expect(try message(#"{"jsonrpc":"2.0","id":2,"result":{}}"#).kinds == [.response(.number("2"))])
        #expect(try message(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#).kinds == [.response(nil)])
        #expect(try message(#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]"#).requestIDs == [.number("1")])
    }

    @Test("what is not a JSON-RPC 2.0 message is no message")
    func notMessages() {
        for text in ["", "{", "42", #"{"id":1,"method":"x"}"#, #"{"jsonrpc":"2.0","id":true,"method":"x"}"#, "[]", #"{"jsonrpc":"2.0"}"#] {
            #expect(JSONRPCMessage(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test("a pretty-printed message becomes one line, its strings untouched")
    func oneLine() throws {
        let line = try message("{\n  \"jsonrpc\": \"2.0\",\r\n  \"id\": 1,\n  \"result\": {\"text\": \"a\\nb\"}\n}").line
        #expect(!line.contains(0x0A) && !line.contains(0x0D))
        #expect(String(decoding: line, as: UTF8.self).contains(#""a\nb""#))
    }

    @Test("the initialize answer's session ID and protocol version go on every later request")
    func sessionHeaders() throws {
        var session = MCPProxySession()
        let initialize = try message(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
        let bearer = [("Authorization", "Bearer t")]
        #expect(
            session.postHeaders(authorization: bearer, for: initialize).map(\.0) == [
                "Accept", "Content-Type", "Mcp-Method", "Authorization",
            ])
        session.sending(initialize)
        let reply = session.reply(
            to: initialize, status: 200, headers: [("mcp-session-id", "abc-1"), ("Content-Type", "text/event-stream; charset=utf-8")])
        #expect(reply == .eventStream)
        session.received(try message(#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#))
        let headers = session.postHeaders(authorization: bearer, for: initialize)
        #expect(headers.first { $0.0 == "Accept" }?.1 == "application/json, text/event-stream")
        #expect(headers.first { $0.0 == "Mcp-Session-Id" }?.1 == "abc-1")
        #expect(headers.first { $0.0 == "MCP-Protocol-Version" }?.1 == "2025-06-18")
    }

    @Test("a request's method and the tool, resource or prompt it names are mirrored in Mcp-Method and Mcp-Name (SEP-2243)")
    func standardHeaders() throws {
        let session = MCPProxySession()
        func mirrored(_ json: String) throws -> [String] {
            session.postHeaders(authorization: [], for: try message(json)).filter { $0.0.hasPrefix("Mcp-") }.map { "\($0.0): \($0.1)" }
        }
        #expect(
            try mirrored(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{}}}"#) == [
                "Mcp-Method: tools/call", "Mcp-Name: get_weather",
            ])
        #expect(
            try mirrored(#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a b"}}"#) == [
                "Mcp-Method: resources/read", "Mcp-Name: file:///a b",
            ])
        // Not printable ASCII, or able to split a header: the Base64 sentinel over its UTF-8.
        #expect(
            try mirrored(#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t\u00f6\u00f6l"}}"#) == [
                "Mcp-Method: tools/call", "Mcp-Name: =?base64?dMO2w7Zs?=",
            ])
        #expect(
            try mirrored(#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"a\r\nX-Injected: 1"}}"#) == [
                "Mcp-Method: prompts/get", "Mcp-Name: =?base64?YQ0KWC1JbmplY3RlZDogMQ==?=",
            ])
        #expect(try mirrored(#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"name":"x"}}"#) == ["Mcp-Method: tools/list"])
        // A notification, a batch or a name that is not a string mirror nothing they cannot.
        #expect(try mirrored(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#) == [])
        #expect(
            try mirrored(
                #"[{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":8,"method":"tools/list"}]"#
            ) == [])
        #expect(try mirrored(#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":7}}"#) == ["Mcp-Method: tools/call"])
    }

    @Test("a session ID or version on an answer to anything but initialize is not taken, nor one that could split a header")
    func foreignSessionID() throws {
        var session = MCPProxySession()
        let ping = try message(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        session.sending(ping)
        _ = session.reply(to: ping, status: 200, headers: [("Mcp-Session-Id", "x"), ("Content-Type", "application/json")])
        session.received(try message(#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"9"}}"#))
        #expect(session.sessionID == nil && session.protocolVersion == nil)

        let initialize = try message(#"{"jsonrpc":"2.0","id":2,"method":"initialize"}"#)
        session.sending(initialize)
        let reply = session.reply(to: initialize, status: 200, headers: [("Mcp-Session-Id", "a b"), ("Content-Type", "application/json")])
        #expect(reply == .garbage("its Mcp-Session-Id is not visible ASCII"))
        #expect(session.sessionID == nil)
    }

    @Test("statuses: 202 accepted, 401 with its DPoP nonce, 403 insufficient_scope with its scopes, 404 with a session, others refused")
    func statuses() throws {
        var session = MCPProxySession()
        let note = try message(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        let call = try message(#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#)
        #expect(session.reply(to: note, status: 202, headers: []) == .accepted)
        #expect(session.reply(to: note, status: 202, headers: [("Content-Type", "application/json")]) == .accepted)
        #expect(session.reply(to: call, status: 401, headers: [("DPoP-Nonce", "n1")]) == .unauthorized(dpopNonce: "n1"))
        let scope = [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="files:read files:write""#)]
        #expect(session.reply(to: call, status: 403, headers: scope) == .insufficientScope(["files:read", "files:write"]))
        let badScope = [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="a\"b""#)]
        #expect(session.reply(to: call, status: 403, headers: badScope) == .refused(status: 403))
        #expect(session.reply(to: call, status: 403, headers: []) == .refused(status: 403))
        #expect(session.reply(to: call, status: 404, headers: []) == .refused(status: 404))
        #expect(session.reply(to: call, status: 200, headers: [("Content-Type", "text/html")]) == .garbage("it answered with text/html"))
        #expect(session.reply(to: call, status: 200, headers: []) == .garbage("it answered with no Content-Type"))

        let initialize = try message(#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#)
        session.sending(initialize)
        _ = session.reply(to: initialize, status: 200, headers: [("Mcp-Session-Id", "s"), ("Content-Type", "application/json")])
        #expect(session.reply(to: call, status: 404, headers: []) == .sessionEnded)
    }

    @Test("the server's own stream: an event stream, a 401 with its nonce, or none (405, or anything else)")
    func serverStream() {
        #expect(MCPProxySession.serverStreamReply(status: 200, headers: [("content-type", "text/event-stream")]) == .eventStream)
        #expect(MCPProxySession.serverStreamReply(status: 401, headers: [("DPoP-Nonce", "n")]) == .unauthorized(dpopNonce: "n"))
        #expect(MCPProxySession.serverStreamReply(status: 405, headers: []) == .refused(status: 405))
        #expect(MCPProxySession.serverStreamReply(status: 200, headers: [("Content-Type", "application/json")]) == .refused(status: 200))
    }

    @Test("a request is answered once: by the server, or with one JSON-RPC error keeping its id")
    func abandon() throws {
        var session = MCPProxySession()
        let one = try message(#"{"jsonrpc":"2.0","id":1,"method":"a"}"#)
        let two = try message(#"{"jsonrpc":"2.0","id":"two","method":"b"}"#)
        let three = try message(#"{"jsonrpc":"2.0","id":3,"method":"c"}"#)
        [one, two, three].forEach { session.sending($0) }
        session.received(try message(#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
        #expect(session.abandon(one.requestIDs, reason: "x").isEmpty)
        let errors = session.abandon(nil, reason: "the server is gone\u{1B}[2J")
        #expect(errors.count == 2)
        for line in errors {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let error = try #require(object["error"] as? [String: Any])
            #expect(error["code"] as? Int == -32000)
            // Text from a server is made inert before it reaches the client's screen.
            #expect((error["message"] as? String)?.contains("\u{1B}") == false)
        }
        #expect(
            errors.map { String(decoding: $0, as: UTF8.self) }.sorted().map { $0.contains(#""id":3"#) || $0.contains(#""id":"two""#) } == [
                true, true,
            ])
        #expect(session.abandon(nil, reason: "again").isEmpty)
    }
}

@Suite("mcp config: the entry each agent's configuration takes")
struct MCPClientConfigurationTests {
    let url = URL(string: "https://mcp.example.com/mcp")!

    @Test("Claude Code: the server over HTTP with latchkey mcp headers as its headersHelper, as JSON")
    func claude() throws {
        let text = MCPClientConfiguration.claude.entry(name: "example", url: url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: [String: [String: String]]])
        #expect(
            object["mcpServers"]?["example"] == [
                "type": "http", "url": "https://mcp.example.com/mcp", "headersHelper": "latchkey mcp headers example",
            ])
    }

    @Test("Codex: a stdio server running the proxy, the table's name quoted (a host name has dots)")
    func codex() {
        #expect(
            MCPClientConfiguration.codex.entry(name: "mcp.example.com", url: url) == """
                [mcp_servers."mcp.example.com"]
                command = "latchkey"
                args = ["mcp", "proxy", "mcp.example.com"]
                """)
    }

    @Test("generic: the stdio command alone")
    func generic() {
        #expect(MCPClientConfiguration.generic.entry(name: "example", url: url) == "latchkey mcp proxy example")
    }
}
