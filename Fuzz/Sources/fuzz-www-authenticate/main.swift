// `WWW-Authenticate` fields of an MCP server's 401 or 403 (LatchkeyOAuth/BearerChallenge.swift),
// one field per line of the input, as `mcp add` and the proxy read them. A Bearer challenge found
// must read back the same when written out again; a 403's insufficient_scope gives only
// RFC 6749 scope-tokens.
internal import FuzzSupport
internal import LatchkeyMCP
internal import LatchkeyOAuth

/// `parameters` written as one Bearer challenge, every value a quoted-string.
func written(_ parameters: [String: String]) -> String {
    let pairs = parameters.sorted { $0.key < $1.key }.map { name, value in
        var quoted = ""
        for character in value.unicodeScalars {
            if character == "\"" || character == "\\" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(character)
        }
        return "\(name)=\"\(quoted)\""
    }
    return (["Bearer"] + [pairs.joined(separator: ", ")]).filter { !$0.isEmpty }.joined(separator: " ")
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let values = input.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    if let challenge = BearerChallenge.find(in: values) {
        precondition(challenge.parameters.keys.allSatisfy { $0 == $0.lowercased() && !$0.isEmpty }, "a parameter name not lowercased")
        let again = BearerChallenge.find(in: [written(challenge.parameters)])
        precondition(again == challenge, "a challenge written out again reads otherwise")
        _ = (challenge.resourceMetadata, challenge.scope)
    }
    var session = MCPProxySession()
    let message = JSONRPCMessage(Array(#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#.utf8))!
    session.sending(message)
    let headers = values.map { ("WWW-Authenticate", $0) }
    if case .insufficientScope(let scopes) = session.reply(to: message, status: 403, headers: headers) {
        precondition(!scopes.isEmpty && scopes.allSatisfy(ScopeToken.isValid), "a scope that is no scope-token was asked for")
    }
    return 0
}

runFuzzer(testOneInput)
