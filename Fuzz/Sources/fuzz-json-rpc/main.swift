// A JSON-RPC message or batch (LatchkeyMCP/JSONRPCMessage.swift), as `mcp proxy` reads what a
// client writes and what a server answers, then routes it through a session
// (LatchkeyMCP/MCPProxySession.swift). The line passed on is the message, line breaks made
// spaces; an error the proxy writes for any id it read must read back as the answer to that id.
internal import FuzzSupport
internal import LatchkeyMCP

/// The JSON-RPC error the proxy writes for `id`, read back: it must answer `id`, and only it.
func checkAnswer(to id: JSONRPCMessage.ID?, message: String) {
    let line = JSONRPCMessage.error(answering: id, code: JSONRPCMessage.serverError, message: message)
    precondition(!line.contains(0x0A) && !line.contains(0x0D), "an error line holds a line break")
    precondition(JSONRPCMessage(line)?.kinds == [.response(id)], "an error the proxy wrote answers another id")
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard let message = JSONRPCMessage(bytes) else { return 0 }
    precondition(!message.kinds.isEmpty, "a message of no kind")
    precondition(message.line.count == bytes.count, "the line passed on is not the message's length")
    precondition(!message.line.contains(0x0A) && !message.line.contains(0x0D), "the line passed on holds a line break")
    for kind in message.kinds {
        switch kind {
        case .request(let id, let method): checkAnswer(to: id, message: method)
        case .notification(let method): checkAnswer(to: nil, message: method)
        case .response(let id): checkAnswer(to: id, message: message.protocolVersion ?? "")
        }
    }
    // Sent by the client, then answered by the server: whatever waits is answered once, here.
    var session = MCPProxySession()
    session.sending(message)
    session.received(message)
    if let version = session.protocolVersion {
        precondition(version.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "a protocol version that cannot go in a header")
    }
    for line in session.abandon(nil, reason: "fuzz") {
        precondition(JSONRPCMessage(line)?.requestIDs == [], "an abandoned request's error is no response")
    }
    precondition(session.abandon(nil, reason: "again").isEmpty, "a request was answered twice")
    return 0
}

runFuzzer(testOneInput)
