import Foundation
import LatchkeyEssentials
public import LatchkeyOAuth
public import LatchkeyProviders
import LatchkeySupport
import LatchkeyVault

/// What `latchkey mcp add` learns from an MCP server's URL alone (the MCP authorization spec):
/// the 401 names the resource's metadata (RFC 9728), which names the authorization server,
/// whose metadata (RFC 8414, else OpenID discovery) says how to register and sign in. Every
/// answer is a stranger's: URLs it names obey `EndpointURL`'s rules for a server's answers, and
/// text from it reaches errors sanitised.
public struct MCPServerDiscovery: Sendable {
    let engine: OAuthEngine

    public init(engine: OAuthEngine) { self.engine = engine }

    /// The provider file to write for the MCP server at `raw`, called `name`: its issuer and
    /// kind, `resources` and `mcp_url` set to the server's canonical URI, the scopes of `scopes`,
    /// else the challenge's, else the metadata's; `clientID` as the client ID when given, else
    /// `clientMetadataURL` (a Client ID Metadata Document) where the authorization server takes
    /// one, else `registration = "dynamic"`. Throws when the server asks for no sign-in, its
    /// metadata names another resource, or the authorization server offers no way to register
    /// (or takes no metadata document when one was given).
    public func draft(for raw: String, name: String, scopes: [String]?, clientID: String?, clientMetadataURL: String? = nil)
        async throws -> ProviderDraft
    {
        // Checked before any request: it is the person's, not the server's.
        let metadataDocument = try clientMetadataURL.map(Self.clientMetadataDocument)
        let server: URL
        switch EndpointURL.validate(raw) {
        case .success(let url): server = url
        case .failure(let problem): throw MCPDiscoveryError.badURL(problem.description)
        }
        guard let resource = ProtectedResourceMetadata.canonical(server) else { throw MCPDiscoveryError.badURL("not a URL with a host") }
        if let problem = ResourceIndicator.problem(resource) { throw MCPDiscoveryError.badURL(problem) }
        let challenge = try await challenge(from: server)
        let metadata = try await resourceMetadata(for: server, resource: resource, challenge: challenge)
        guard let first = metadata.authorizationServers?.first else { throw MCPDiscoveryError.noAuthorizationServer }
        let issuer: String
        switch EndpointURL.validate(first, namedBy: server) {
        case .success(let url): issuer = url.absoluteString
        case .failure(let problem): throw MCPDiscoveryError.badURL(field: "authorization_servers", problem.description)
        }
        var draft = ProviderDraft(preset: nil, name: name, issuer: issuer, clientID: clientID)
        draft.resources = [resource]
        draft.mcpURL = resource
        let named = scopes ?? challenge.scope.map { $0.split(separator: " ").map(String.init) } ?? metadata.scopesSupported ?? []
        // Written into the provider file: only what RFC 6749 §3.3 allows a scope to be.
        if let bad = named.first(where: { !ScopeToken.isValid($0) }) {
            throw MCPDiscoveryError.badScope(TerminalText.sanitized(bad, maxLength: 80))
        }
        draft.scopes = named
        let serverMetadata = try await authorizationServer(of: &draft)
        if clientID == nil, let metadataDocument {
            guard serverMetadata.acceptsClientIDMetadataDocuments else {
                throw MCPDiscoveryError.noClientMetadataDocuments(issuer: issuer)
            }
            draft.clientID = metadataDocument.absoluteString
        } else if clientID == nil {
            guard serverMetadata.registrationEndpoint != nil else { throw MCPDiscoveryError.noRegistration(issuer: issuer) }
            draft.registersDynamically = true
        }
        return draft
    }

    /// `--client-metadata-url` as a client ID: an https URL with a path, no fragment and no
    /// user information (Client ID Metadata Document draft §3), which the authorization server
    /// fetches; written as `client_id`, so it must also be what a provider file can hold.
    static func clientMetadataDocument(_ raw: String) throws(MCPDiscoveryError) -> URL {
        guard let components = URLComponents(string: raw), let url = components.url, components.scheme == "https",
            let host = components.host, !host.isEmpty
        else { throw .badClientMetadataURL("not an https URL") }
        guard components.fragment == nil, components.user == nil, components.password == nil else {
            throw .badClientMetadataURL("it may have no fragment and no user information")
        }
        guard components.path.count > 1 else { throw .badClientMetadataURL("it needs a path naming the document") }
        guard raw.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C }) else {
            throw .badClientMetadataURL("only visible ASCII without quotes or backslashes")
        }
        return url
    }

    // MARK: - Steps

    /// The `Bearer` challenge of the server's answer to a request without a token: an MCP
    /// `initialize` POST, as a client's first request is.
    func challenge(from server: URL) async throws -> BearerChallenge {
        let initialize =
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"latchkey","version":"1"}}}"#
        let response = try await engine.transport.send(
            HTTPRequest(
                method: .post, url: server,
                headers: [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")],
                body: Array(initialize.utf8)))
        guard response.status == 401 else { throw MCPDiscoveryError.noSignInAsked(status: response.status) }
        let values = response.headers.filter { $0.0.lowercased() == "www-authenticate" }.map(\.1)
        guard let challenge = BearerChallenge.find(in: values) else { throw MCPDiscoveryError.badChallenge }
        return challenge
    }

    /// The resource's metadata: at the challenge's `resource_metadata` alone when it names one,
    /// else at the well-known URLs in turn; its `resource` must be `resource` (RFC 9728 §3.3).
    func resourceMetadata(for server: URL, resource: String, challenge: BearerChallenge) async throws -> ProtectedResourceMetadata {
        var candidates: [URL]
        if let named = challenge.resourceMetadata {
            switch EndpointURL.validate(named, namedBy: server) {
            case .success(let url): candidates = [url]
            case .failure(let problem): throw MCPDiscoveryError.badURL(field: "resource_metadata", problem.description)
            }
        } else {
            candidates = ProtectedResourceMetadata.wellKnownURLs(for: server)
        }
        for url in candidates {
            let response = try await engine.transport.send(HTTPRequest(method: .get, url: url, headers: [("Accept", "application/json")]))
            guard response.status == 200 else { continue }
            guard let metadata = try? JSONDecoder().decode(ProtectedResourceMetadata.self, from: Data(response.body)) else {
                throw MCPDiscoveryError.badMetadata(url: url.absoluteString)
            }
            guard let named = URL(string: metadata.resource).flatMap(ProtectedResourceMetadata.canonical), named == resource else {
                throw MCPDiscoveryError.otherResource(expected: resource, named: TerminalText.sanitized(metadata.resource, maxLength: 200))
            }
            return metadata
        }
        throw MCPDiscoveryError.noMetadata(tried: candidates.map(\.absoluteString))
    }

    /// Reads the issuer's metadata as the provider file will (RFC 8414 for `kind = "oauth2"`,
    /// then OpenID discovery for `"oidc"`), sets the draft's kind to the one found and returns
    /// that metadata.
    func authorizationServer(of draft: inout ProviderDraft) async throws -> ServerMetadata {
        var failures: [String] = []
        for isOpenID in [false, true] {
            draft.isOpenID = isOpenID
            guard let provider = draft.blankProvider() else {
                throw MCPDiscoveryError.badURL(field: "authorization_servers", "not an issuer")
            }
            do {
                return try await engine.metadata(for: provider, fresh: true)
            } catch DiscoveryError.unreadableDocument(_, let reason) {
                failures.append(reason)
            }
        }
        throw MCPDiscoveryError.noServerMetadata(issuer: draft.issuer ?? "", reasons: failures)
    }
}
