public import Foundation
public import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyOAuth
import LatchkeyVault

/// The account's headers for each request `mcp proxy` sends, from the broker, whichever it is:
/// its token, and for a DPoP-bound one a proof for that very request (RFC 9449 §7.1), made by
/// whoever holds the key. What a refusal or a server's scope challenge may cost is the broker's
/// rule (`ForcedRefresh`, `ScopeStepUp`), the same with an agent and without.
public struct BrokerCredentials: MCPProxyCredentials {
    let broker: any Broker
    let selector: String
    /// The MCP server, as the broker named it with the account's token (`mcp_url`).
    public let server: URL
    let workingDirectory: String?

    /// The account's broker and the MCP server its provider file names, learnt from the first
    /// token the broker releases (the agent's provider file, on a host without one).
    public static func opening(_ selector: String, broker: any Broker, workingDirectory: String?) async throws -> BrokerCredentials {
        let release = try await broker.token(TokenRequest(selector: selector, workingDirectory: workingDirectory))
        guard let raw = release.mcpURL, let server = URL(string: raw) else {
            throw MCPProxyError.notAnMCPServer(provider: release.provider)
        }
        return BrokerCredentials(broker: broker, selector: selector, server: server, workingDirectory: workingDirectory)
    }

    /// The token `mcp headers` would give; after a 401 (`refused`), the refused token named by its
    /// hash, so the broker refreshes the account only if that is still the token it holds. A bound
    /// token's proof is a second request: when the account was refreshed in between (another
    /// request's 401, or its token's last minute), the proof for the token just received is
    /// refused, and the token and its proof are asked for once more.
    public func authorization(method: String, url: URL, refused: [(String, String)]?, nonce: String?) async throws -> [(String, String)] {
        var request = TokenRequest(
            selector: selector, refused: refused.flatMap(Self.refusedTokenHash), workingDirectory: workingDirectory)
        var attempt = 1
        while true {
            let release = try await broker.token(request)
            guard let token = release.accessToken else { throw MCPProxyError.noToken(reason: "the broker released no access token") }
            guard release.proofBound else { return [("Authorization", "Bearer " + token.exposedValue)] }
            let asked = ProofRequest(
                selector: "\(release.provider):\(release.subject)", method: method, url: url.absoluteString, nonce: nonce,
                tokenHash: DPoPKey.accessTokenHash(token), workingDirectory: workingDirectory)
            do {
                let proof = try await broker.proof(asked)
                return [("Authorization", "DPoP " + token.exposedValue), ("DPoP", proof.proof.exposedValue)]
            } catch let error as any LatchkeyError where attempt == 1 && error.category == .rejected {
                request.refused = nil
                attempt += 1
            }
        }
    }

    /// The `ath` of the access token in the `Authorization` header a server refused.
    static func refusedTokenHash(_ headers: [(String, String)]) -> String? {
        headers.first { $0.0 == "Authorization" }.flatMap { header in
            ["Bearer ", "DPoP "].first { header.1.hasPrefix($0) }.map {
                DPoPKey.accessTokenHash(Secret(String(header.1.dropFirst($0.count))))
            }
        }
    }

    public func signInAgain(adding scopes: [String]) async throws {
        try await broker.moreScope(ScopeRequest(selector: selector, scopes: scopes, askedBy: "the MCP server \(server.absoluteString)"))
    }
}
