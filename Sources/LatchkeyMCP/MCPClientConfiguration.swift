public import Foundation
import LatchkeyProviders

/// The entry a coding agent's configuration needs for an MCP server Latchkey signs in to
/// (`latchkey mcp config`), in that agent's own format, to paste as it is.
public enum MCPClientConfiguration: String, CaseIterable, Sendable {
    /// Claude Code's `.mcp.json`: the server over Streamable HTTP, its header from
    /// `latchkey mcp headers` run as its `headersHelper` on every connection.
    case claude
    /// Codex's `config.toml` (`[mcp_servers.NAME]`): a stdio server, `latchkey mcp proxy`, since
    /// Codex's HTTP servers take only literal headers or headers from the environment.
    case codex
    /// Any client that starts a stdio server: the command line alone.
    case generic

    /// The entry for the provider `name`, whose MCP server is at `url`. `name` is a provider
    /// name (`Provider.isValidName`: no quote, backslash or space), so it needs no escaping in a
    /// shell word; JSON and TOML get it escaped anyway.
    public func entry(name: String, url: URL) -> String {
        switch self {
        case .claude:
            let server: [String: String] = ["type": "http", "url": url.absoluteString, "headersHelper": "latchkey mcp headers \(name)"]
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let json = (try? encoder.encode(["mcpServers": [name: server]])) ?? Data()
            return String(decoding: json, as: UTF8.self)
        case .codex:
            let arguments = ["mcp", "proxy", name].map(ProviderPresets.tomlString).joined(separator: ", ")
            return """
                [mcp_servers.\(ProviderPresets.tomlString(name))]
                command = "latchkey"
                args = [\(arguments)]
                """
        case .generic:
            return "latchkey mcp proxy \(name)"
        }
    }
}
