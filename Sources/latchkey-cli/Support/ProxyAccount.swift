import ArgumentParser
import Foundation
import LatchkeyAgentWire
import LatchkeyCore
import LatchkeyEssentials
import LatchkeyVault

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
            // Sent as Bearer it would only be refused; say why instead.
            guard answer.proofBound != true else { throw MCPProxyError.proofBoundThroughAgent(account: answer.account ?? selector) }
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
