import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyMCP
import LatchkeyProviders
import LatchkeyVault

/// `latchkey mcp config NAME --client claude|codex|generic`: the entry to paste into an agent's
/// configuration for an MCP server `latchkey mcp add` added.
struct MCPConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract:
            "Print the entry an agent's configuration needs for the MCP server (Claude Code's .mcp.json, Codex's config.toml, or the stdio command)."
    )

    @Argument(help: "The provider's name, as `latchkey mcp add` named it.", completion: Completions.providers) var name: String
    @Option(
        help:
            "The agent: claude (an HTTP server with `latchkey mcp headers` as its headersHelper), codex (a stdio server running `latchkey mcp proxy`), or generic (the stdio command).",
        transform: { value in
            guard let client = MCPClientConfiguration(rawValue: value) else {
                throw ValidationError("--client is claude, codex or generic")
            }
            return client
        })
    var client: MCPClientConfiguration

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let context = options.context()
            guard let url = try await Self.server(of: name, context: context) else { throw MCPProxyError.notAnMCPServer(provider: name) }
            // As it is: JSON and TOML escape what they must, and the name is a provider name.
            FileHandle.standardOutput.write(
                Data((client.entry(name: name, url: url) + "\n").utf8))
        }
    }

    /// This machine's provider file's `mcp_url`; on a host without the file (a forwarded one),
    /// the one the agent's names, asked as `mcp proxy` asks it (a token request the agent
    /// decides on as on any other; the token is dropped).
    static func server(of name: String, context: Composition) async throws -> URL? {
        do {
            return try context.catalog.provider(named: name).protocolChoices?.mcpURL
        } catch {
            guard case .unknown = error, AgentSocket.endpoint({ context.environment[$0] }) != nil else { throw error }
            let broker = context.broker(person: nil, say: { Output.error($0) })
            return try await BrokerCredentials.opening(name, broker: broker, workingDirectory: workingDirectory).server
        }
    }
}
