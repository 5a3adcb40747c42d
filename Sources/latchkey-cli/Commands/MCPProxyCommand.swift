import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyMCP
import LatchkeyProviders
import LatchkeyVault

/// `latchkey mcp proxy NAME[:ACCOUNT]`: a stdio MCP server for clients that speak only stdio or
/// sign in badly, forwarding to the provider file's `mcp_url` (the agent's, when the token comes
/// from the agent) over Streamable HTTP with the account's token (`MCPProxy`).
struct MCPProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract:
            "Serve MCP on stdin and stdout, forwarding every message to the MCP server over Streamable HTTP with the account's token.",
        discussion:
            "Standard input and output carry JSON-RPC, one message a line; messages for people go to standard error. Refreshes the token once when the server refuses it; when the server is gone, answers every waiting request with a JSON-RPC error and exits (69)."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT, as `latchkey mcp add` named it.", completion: Completions.providers)
    var selector: String

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let context = options.context()
            // A provider file here that names no MCP server is refused before any sign-in.
            let provider = AccountSelector(parsing: selector).provider
            if let file = try? context.catalog.provider(named: provider), file.protocolChoices?.mcpURL == nil {
                throw MCPProxyError.notAnMCPServer(provider: provider)
            }
            // A sign-in the proxy needs happens on the controlling terminal (a device code over
            // SSH), never on standard input, which is the client's JSON-RPC stream.
            let broker = context.broker(person: CommandLineInteraction.atTerminal(), say: { Output.error($0) })
            let credentials = try await BrokerCredentials.opening(selector, broker: broker, workingDirectory: workingDirectory)
            // The client may go before the proxy does: a write to its closed pipe fails, it does
            // not kill the process.
            signal(SIGPIPE, SIG_IGN)
            let proxy = MCPProxy(
                url: credentials.server, credentials: credentials, write: StandardOutputLines.write,
                log: { Output.error("mcp proxy: " + $0) })
            if let failure = await proxy.run(StandardInputLines.read(limit: MCPProxy.messageLimit)) { throw failure }
        }
    }
}
