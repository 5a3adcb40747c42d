import ArgumentParser
import Foundation
import LatchkeyAgentWire
import LatchkeyCore
import LatchkeyEssentials
import LatchkeyVault

/// `latchkey mcp proxy NAME[:ACCOUNT]`: a stdio MCP server for clients that speak only stdio or
/// sign in badly, forwarding to the provider file's `mcp_url` over Streamable HTTP with the
/// account's token (`MCPProxy`).
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
            let account = try AccountSelector(parsing: selector)
            guard let url = try context.catalog.provider(named: account.provider).protocolChoices?.mcpURL else {
                throw MCPProxyError.notAnMCPServer(provider: account.provider)
            }
            // The client may go before the proxy does: a write to its closed pipe fails, it does
            // not kill the process.
            signal(SIGPIPE, SIG_IGN)
            let proxy = MCPProxy(
                url: url, credentials: ProxyAccount(selector: selector, context: context), write: StandardOutputLines.write,
                log: { Output.error("mcp proxy: " + $0) })
            if let failure = await proxy.run(StandardInputLines.read(limit: MCPProxy.messageLimit)) { throw failure }
        }
    }
}

/// The account's headers for each request the proxy sends: its token as `mcp headers` gets it
/// (the agent first, else this machine's vault, refreshed as `token` does), with a DPoP proof
/// for a bound account (RFC 9449 §7.1), made here with the key the vault keeps.
struct ProxyAccount: MCPProxyCredentials {
    let selector: String
    let context: Composition

    /// The token `mcp headers` would print; after a 401 (`renewed`), a refreshed one. Through
    /// the agent that is the agent's current token: it refreshes on its own schedule, and a
    /// token it still holds valid is handed out again (`min_ttl` is capped at half a token's
    /// lifetime, so it cannot force a refresh).
    func authorization(method: String, url: URL, renewed: Bool, nonce: String?) async throws -> [(String, String)] {
        let request = ThroughAgent.tokenRequest(selector, minimumLifetime: 60, tokens: .access)
        if let answer = try ThroughAgent.ask(request, context: context), let token = answer.accessToken {
            return [("Authorization", "Bearer " + token.exposedValue)]
        }
        let service = context.service
        var record = try await service.validRecord(
            for: AccountSelector(parsing: selector), minimumLifetime: 60, signingInWith: Self.interaction())
        if renewed {
            // That very account (the selector may have been a directory's mapping), refreshed
            // whatever its expiry: the server has refused the token it holds.
            record = try await service.refresh(AccountSelector(provider: record.provider, account: record.subject))
        }
        let token = try service.token(of: record, idToken: false)
        guard record.isProofBound else { return [("Authorization", "Bearer " + token.exposedValue)] }
        let proof = try service.proof(for: record, token: token, method: method, url: url, nonce: nonce)
        return [("Authorization", "DPoP " + token.exposedValue), ("DPoP", proof)]
    }

    /// Signs the account in again as itself, asking for the union of the provider's scopes, the
    /// account's and `scopes`: in the browser, or with a device code (RFC 8628) where no browser
    /// can open here (over SSH, or neither `$BROWSER` nor a display); a prompt goes to the
    /// terminal if there is one, never to standard input.
    func signInAgain(adding scopes: [String]) async throws {
        let service = context.service
        let selector = try AccountSelector(parsing: self.selector)
        var provider = try context.catalog.provider(named: selector.provider)
        let record = try await service.validRecord(for: selector, minimumLifetime: 0)
        var wanted: [String] = []
        for scope in record.scopes + scopes where !provider.scopes.contains(scope) && !wanted.contains(scope) { wanted.append(scope) }
        switch provider.kind {
        case .oidc(var client):
            client.scopes += wanted
            provider.kind = .oidc(client)
        case .oauth2(var client):
            client.scopes += wanted
            provider.kind = .oauth2(client)
        case .firebase:
            return
        }
        _ = try await service.signIn(
            provider: provider, mode: Self.browserCanOpen(context.environment) ? nil : .device,
            account: AccountSelector(provider: record.provider, account: record.subject),
            interaction: Self.interaction() ?? CommandLineInteraction.browserOnly())
    }

    /// Where a sign-in the proxy needs happens: the controlling terminal (device code over SSH),
    /// never standard input, which is the client's JSON-RPC stream.
    static func interaction() -> CommandLineInteraction? { CommandLineInteraction.atTerminal() }

    /// Whether a browser opened from here is one the person sees: not over SSH, and `$BROWSER`
    /// or a display (macOS always has one).
    static func browserCanOpen(_ environment: [String: String]) -> Bool {
        #if os(macOS)
            let display = true
        #else
            let display = ["BROWSER", "DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
        #endif
        return display && (environment["SSH_CONNECTION"] ?? "").isEmpty
    }
}

/// The client's messages: standard input, one line each, read on a thread of its own (a read
/// blocks); a line over `limit` is cut there, so it reaches the proxy as the broken JSON it is.
enum StandardInputLines {
    static func read(limit: Int) -> AsyncStream<[UInt8]> {
        let (lines, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        Thread.detachNewThread {
            var line: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { Foundation.read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                for byte in buffer[..<count] {
                    if byte == 0x0A {
                        continuation.yield(line)
                        line.removeAll(keepingCapacity: true)
                    } else if line.count < limit {
                        line.append(byte)
                    }
                }
            }
            if !line.isEmpty { continuation.yield(line) }
            continuation.finish()
        }
        return lines
    }
}

/// Lines to the client on standard output, each whole, with its newline (the stdio transport).
enum StandardOutputLines {
    static func write(_ line: [UInt8]) {
        let bytes = line + [0x0A]
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Foundation.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            // The client closed its end: nobody is left to read; its stdin ends the proxy.
            guard count > 0 else { return }
            written += count
        }
    }
}
