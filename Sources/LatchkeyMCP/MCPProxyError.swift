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
    /// The provider file names no MCP server (`mcp_url`).
    case notAnMCPServer(provider: String)
    /// The agent released the account's token but named no MCP server with it: its provider
    /// file has no `mcp_url`, or the agent is older than `mcp_url` in its answers.
    case notAnMCPServerAtAgent(provider: String)
    /// The server asks for more scope and the account's token comes from the agent, which signs
    /// in only where it runs, with the person there.
    case moreScopeThroughAgent(account: String, scopes: [String])

    public var category: FailureCategory {
        switch self {
        case .serverGone, .sessionEnded: return .unavailable
        case .garbage: return .rejected
        case .noToken: return .notFound
        case .notAnMCPServer, .notAnMCPServerAtAgent, .moreScopeThroughAgent: return .usage
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
        case .notAnMCPServerAtAgent(let provider):
            return
                "the agent gave a token for \(TerminalText.sanitized(provider, maxLength: 120)) but named no MCP server with it: where the agent runs, its provider file has no mcp_url (add the server there with `latchkey mcp add URL`), or that Latchkey is older than this one"
        case .moreScopeThroughAgent(let account, let scopes):
            let provider = TerminalText.sanitized(AccountSelector(parsing: account).provider, maxLength: 120)
            return
                "\(TerminalText.sanitized(account, maxLength: 120))'s token comes from the agent, which signs in only where it runs: there, add \(TerminalText.sanitized(scopes.joined(separator: " "), maxLength: 300)) to the scopes of \(provider)'s provider file and run `latchkey login \(TerminalText.sanitized(account, maxLength: 120))`"
        case .notAnMCPServer(let provider):
            return
                "\(TerminalText.sanitized(provider, maxLength: 120)) names no MCP server (no mcp_url in its provider file); add the server with `latchkey mcp add URL`"
        }
    }
}
