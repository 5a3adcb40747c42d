import LatchkeyEssentials
public import LatchkeyVault

/// Why `latchkey mcp proxy` ended before its client did; every request still waiting was
/// answered with a JSON-RPC error first.
public enum MCPProxyError: LatchkeyError, Equatable {
    /// The server could not be reached, or its connection broke mid-answer (the transport's reason).
    case serverGone(server: String, reason: String)
    /// The server answered something the Streamable HTTP transport does not allow.
    case garbage(server: String, reason: String)
    /// The server no longer knows the session (404 to a request carrying its ID).
    case sessionEnded(server: String)
    /// No token could be had for the account (the reason is the account's error).
    case noToken(reason: String)
    /// The broker released the account's token but named no MCP server with it: the provider
    /// file (here, or where the agent runs) has no `mcp_url`.
    case notAnMCPServer(provider: String)

    public var category: FailureCategory {
        switch self {
        case .serverGone, .sessionEnded: return .unavailable
        case .garbage: return .rejected
        case .noToken: return .notFound
        case .notAnMCPServer: return .usage
        }
    }

    public var description: String {
        switch self {
        case .serverGone(let server, let reason):
            return
                "the MCP server \(TerminalText.sanitized(server, maxLength: 200)) is gone (\(TerminalText.sanitized(reason, maxLength: 300))); the client may start the proxy again"
        case .garbage(let server, let reason):
            return
                "the MCP server \(TerminalText.sanitized(server, maxLength: 200)) answered something that is no Streamable HTTP answer: \(TerminalText.sanitized(reason, maxLength: 300))"
        case .sessionEnded(let server):
            return
                "the MCP server \(TerminalText.sanitized(server, maxLength: 200)) ended the session; the client must start the proxy again to begin a new one"
        case .noToken(let reason):
            return "no token for the MCP server: \(reason)"
        case .notAnMCPServer(let provider):
            return
                "\(TerminalText.sanitized(provider, maxLength: 120)) names no MCP server (no mcp_url in its provider file, here or where the agent runs); add the server with `latchkey mcp add URL`"
        }
    }
}
