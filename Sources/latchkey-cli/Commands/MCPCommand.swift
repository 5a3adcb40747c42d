import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyMCP
import LatchkeyProviders
import LatchkeyVault

/// `latchkey mcp`: MCP servers as providers (the MCP authorization spec): added from their URL
/// alone, and their tokens handed to coding agents as those expect them.
struct MCPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Sign in to remote MCP servers and hand their tokens to coding agents.",
        subcommands: [AddMCPServer.self, MCPHeaders.self, MCPProxyCommand.self, MCPConfigCommand.self])
}

struct AddMCPServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract:
            "Discover an MCP server's authorization server from its URL (RFC 9728, RFC 8414), write a provider file for it, register (RFC 7591) and sign in."
    )

    @Argument(help: "The MCP server's URL (its Streamable HTTP endpoint), such as https://mcp.example.com/mcp.") var url: String
    @Option(help: "The new provider's name (its file name); one derived from the server's host by default.") var name: String?
    @Option(help: "The scopes to ask for, space-separated; by default those the server's challenge or metadata names.")
    var scopes: String?
    @Option(name: .customLong("client-id"), help: "A client ID registered at the authorization server, instead of registering one.")
    var clientID: String?
    @Option(
        name: .customLong("client-metadata-url"),
        help:
            "The https URL of a Client ID Metadata Document you host, used as the client ID where the authorization server takes one (client_id_metadata_document_supported), instead of registering."
    )
    var clientMetadataURL: String?
    @Option(
        name: .customLong("loopback-port"),
        help:
            "A port for the loopback redirect, written to the file as loopback_port (repeatable): for a server that matches redirect URIs port and all."
    )
    var loopbackPorts: [Int] = []
    @Option(help: "Seconds to wait for the browser.") var timeout: Int = 300

    @OptionGroup var options: KeystoreOptions

    func validate() throws {
        if timeout <= 0 { throw ValidationError("--timeout must be positive") }
        if let scopes, scopes.split(separator: " ").isEmpty { throw ValidationError("--scopes must name at least one scope") }
        if clientID != nil && clientMetadataURL != nil {
            throw ValidationError("give --client-id or --client-metadata-url, not both: each is the client ID")
        }
    }

    func run() async throws {
        try await Failure.reporting {
            let environment = ProcessInfo.processInfo.environment
            let directories = ProviderCatalog.searchDirectories(environment: environment)
            let name = try self.name ?? Self.name(derivedFrom: url)
            let context = options.context()
            // Refused before any request: the name is the person's to choose, not the server's.
            if let taken = context.catalog.providers.first(where: { $0.name == name }) {
                throw MCPDiscoveryError.nameTaken(name: name, file: taken.sourceFile)
            }
            var draft = try await MCPServerDiscovery(engine: context.service.engine).draft(
                for: url, name: name, scopes: scopes.map { $0.split(separator: " ").map(String.init) }, clientID: clientID,
                clientMetadataURL: clientMetadataURL)
            draft.loopbackPorts = loopbackPorts
            let file = try ProviderPresets(environment: environment).write(draft, into: directories[0], alongside: directories)
            Output.info("Added \(file) for the MCP server \(draft.mcpURL ?? url).")
            let signingIn = options.context()
            let provider = try signingIn.catalog.provider(named: name)
            let record: AccountRecord
            do {
                (record, _) = try await signingIn.service.signIn(
                    provider: provider, interaction: CommandLineInteraction(), timeout: .seconds(timeout))
            } catch {
                // The file is right whatever became of the sign-in: keep it, and say how to go on.
                Output.info("\(file) stays; `latchkey login \(name)` signs in.")
                throw error
            }
            Output.info(
                "Signed in to \(name) as \(TerminalText.sanitized(record.label)); `latchkey mcp headers \(name)` gives an agent its header."
            )
        }
    }

    /// The server's host as a provider name (`mcp.example.com`), characters a name cannot hold
    /// turned into `-`.
    static func name(derivedFrom raw: String) throws -> String {
        guard let host = URLComponents(string: raw)?.host?.lowercased(), !host.isEmpty else {
            throw ValidationError("the MCP server's URL has no host; give an https URL")
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
        let name = String(host.map { allowed.contains($0) ? $0 : "-" }).drop { $0 == "." || $0 == "-" }
        guard Provider.isValidName(String(name)) else { throw ValidationError("no provider name follows from the host; give --name") }
        return String(name)
    }
}

struct MCPHeaders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "headers",
        abstract:
            "Print {\"Authorization\": \"Bearer …\"} and nothing else, with a valid access token (refreshed first when needed): an agent's headers helper."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT, as `latchkey mcp add` named it.", completion: Completions.providers)
    var selector: String
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let release = try await options.broker(person: CommandLineInteraction.atTerminal()).token(
                TokenRequest(selector: selector, minimumLifetime: minimumLifetime.seconds, workingDirectory: workingDirectory))
            // A proof names the request it goes with, which a headers helper never sees.
            guard !release.proofBound else { throw MCPHeadersError.proofBound(account: release.account) }
            try Self.print(try release.requiredAccessToken())
        }
    }

    /// The one JSON object of a headers helper (Claude Code's `headersHelper`), on one line and
    /// as it is: a token is visible ASCII (checked when it was received), and the encoder
    /// escapes anything JSON must.
    static func print(_ token: Secret) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(["Authorization": "Bearer " + token.exposedValue])
        FileHandle.standardOutput.write(json + Data("\n".utf8))
    }
}
