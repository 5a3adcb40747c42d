import ArgumentParser
import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyBrokerWire
import LatchkeyVault
import LatchkeyBroker
import LatchkeyMCP
import LatchkeyOAuth
import LatchkeyAccounts
import LatchkeyProviders

/// The account's headers for each request the proxy sends: its token as `mcp headers` gets it
/// (the agent first, else this machine's vault, refreshed as `token` does), with a DPoP proof
/// for a bound account (RFC 9449 §7.1), made with the key the vault keeps, by whichever holds it.
struct ProxyAccount: MCPProxyCredentials {
    let selector: String
    let context: Composition
    /// The agent answered for the account when the proxy started: its tokens and its MCP
    /// server's URL come from there, and a sign-in for more scope can only happen there.
    let throughAgent: Bool

    /// The account and the MCP server to forward to. When the agent answers for the account,
    /// the URL is the one its provider file names (`mcp_url` in its answer), the URL its token
    /// is bound to (RFC 8707), so a host without the file (a forwarded one) needs only the
    /// agent; else this machine's provider file names it.
    static func opening(_ selector: String, context: Composition) throws -> (account: ProxyAccount, server: URL) {
        if let server = try agentsServer(for: selector, context: context) {
            return (ProxyAccount(selector: selector, context: context, throughAgent: true), server)
        }
        let provider = AccountSelector(parsing: selector).provider
        guard let server = try context.catalog.provider(named: provider).protocolChoices?.mcpURL else {
            throw MCPProxyError.notAnMCPServer(provider: provider)
        }
        return (ProxyAccount(selector: selector, context: context, throughAgent: false), server)
    }

    /// The MCP server the agent's provider file names for `selector`'s account, asked as a
    /// token is (the agent decides, as for any token, whether this client may have it); `nil`
    /// when no agent answers.
    static func agentsServer(for selector: String, context: Composition) throws -> URL? {
        let request = ThroughAgent.tokenRequest(selector, minimumLifetime: 60, tokens: .access)
        guard let answer = try ThroughAgent.ask(request, context: context), answer.accessToken != nil else { return nil }
        guard let raw = answer.mcpURL, let server = URL(string: raw) else {
            throw MCPProxyError.notAnMCPServerAtAgent(provider: answer.provider ?? AccountSelector(parsing: selector).provider)
        }
        return server
    }

    /// The token `mcp headers` would print; after a 401 (`refused`), a refreshed one. Through
    /// the agent, the refused token is named by its hash: the agent refreshes the account if
    /// that is still the token it holds, and answers its current one otherwise; a bound token's
    /// proof is the agent's too (`dpop-proof`), since the key stays in its vault.
    func authorization(method: String, url: URL, refused: [(String, String)]?, nonce: String?) async throws -> [(String, String)] {
        var request = ThroughAgent.tokenRequest(selector, minimumLifetime: 60, tokens: .access)
        request.refused = refused?.first { $0.0 == "Authorization" }.flatMap { header in
            ["Bearer ", "DPoP "].first { header.1.hasPrefix($0) }.map {
                DPoPKey.accessTokenHash(Secret(String(header.1.dropFirst($0.count))))
            }
        }
        // A bound token's proof is a second request: when the agent refreshed the account in
        // between (another request's 401, or its token's last minute), it refuses a proof for the
        // token just received, and the token and its proof are asked for once more.
        for attempt in 1...2 {
            guard let answer = try ThroughAgent.ask(request, context: context), let token = answer.accessToken else { break }
            guard answer.proofBound == true else { return [("Authorization", "Bearer " + token.exposedValue)] }
            let asked = AgentRequest(
                .dpopProof, selector: selector, workingDirectory: FileManager.default.currentDirectoryPath, client: .current(),
                dpop: AgentRequest.ProofTarget(
                    method: method, url: url.absoluteString, nonce: nonce, tokenHash: DPoPKey.accessTokenHash(token)))
            var refusal: String?
            do {
                guard let proof = try ThroughAgent.ask(asked, context: context, refused: { refusal = $0 })?.proof else {
                    throw MCPProxyError.noToken(reason: "the agent that gave the DPoP-bound token made no proof for it")
                }
                return [("Authorization", "DPoP " + token.exposedValue), ("DPoP", proof.exposedValue)]
            } catch let status as ExitCode where attempt == 1 && status.rawValue == Failure.exitCode(for: .rejected) {
                request.refused = nil
            } catch {
                if let refusal { Output.error(refusal) }
                throw error
            }
        }
        let service = context.service
        var record = try await service.validRecord(
            for: AccountSelector(parsing: selector), minimumLifetime: 60, signingInWith: Self.interaction())
        if refused != nil {
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
    ///
    /// Not through the agent: a sign-in there needs the person where the agent runs, who may
    /// not be at that machine, and never starts from a client's request.
    func signInAgain(adding scopes: [String]) async throws {
        if throughAgent { throw MCPProxyError.moreScopeThroughAgent(account: selector, scopes: scopes) }
        let service = context.service
        let selector = AccountSelector(parsing: self.selector)
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
