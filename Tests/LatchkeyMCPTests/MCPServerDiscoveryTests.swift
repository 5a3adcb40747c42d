import Foundation
import LatchkeyTestSupport
import LatchkeyVault
import Testing

@testable import LatchkeyMCP
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySupport

@Suite("MCP servers: the Bearer challenge (RFC 6750 §3, RFC 9110 §11.6.1)")
struct BearerChallengeTests {
    @Test("RFC 9728 §5.1's challenge gives its resource_metadata")
    func rfc9728Example() {
        let challenge = BearerChallenge.find(in: [
            #"Bearer resource_metadata="https://resource.example.com/.well-known/oauth-protected-resource""#
        ])
        #expect(challenge?.resourceMetadata == "https://resource.example.com/.well-known/oauth-protected-resource")
    }

    @Test("RFC 6750 §3's challenges give their parameters, names case-insensitive")
    func rfc6750Examples() {
        let expired = BearerChallenge.find(in: [
            #"Bearer realm="example", error="invalid_token", error_description="The access token expired""#
        ])
        #expect(expired?.parameters == ["realm": "example", "error": "invalid_token", "error_description": "The access token expired"])
        #expect(BearerChallenge.find(in: [#"bearer Scope="read write""#])?.scope == "read write")
    }

    @Test("the Bearer challenge is found after another scheme's, in one field or in a second one")
    func amongOthers() {
        let one = BearerChallenge.find(in: [#"Basic realm="x", Bearer scope="mcp", resource_metadata="https://a.example/m""#])
        #expect(one?.scope == "mcp" && one?.resourceMetadata == "https://a.example/m")
        let two = BearerChallenge.find(in: [#"Basic realm="x""#, #"Bearer resource_metadata="https://a.example/m""#])
        #expect(two?.resourceMetadata == "https://a.example/m")
        #expect(BearerChallenge.find(in: [#"Basic realm="x""#]) == nil)
    }

    @Test("a quoted-pair is unescaped and a token value is taken as it is")
    func values() {
        #expect(
            BearerChallenge.find(in: [#"Bearer realm="a \"b\"", error=invalid_token"#])?.parameters == [
                "realm": #"a "b""#, "error": "invalid_token",
            ])
    }

    @Test("a challenge off the grammar is none: a parameter twice, an open quote, a control character")
    func malformed() {
        #expect(
            BearerChallenge.find(in: [#"Bearer resource_metadata="https://a.example/1", resource_metadata="https://b.example/2""#]) == nil)
        #expect(BearerChallenge.find(in: [#"Bearer resource_metadata="https://a.example/1"#]) == nil)
        #expect(BearerChallenge.find(in: ["Bearer realm=\"a\u{1B}[31m\""]) == nil)
        #expect(BearerChallenge.find(in: [#"Bearer realm="a" error="b""#]) == nil)
    }
}

@Suite("MCP servers: discovery from the URL alone (RFC 9728, RFC 8414, the MCP authorization spec)")
struct MCPServerDiscoveryTests {
    static let server = "https://mcp.example.com/mcp"

    /// An MCP server at `server` and its authorization server at https://auth.example.com, both
    /// answered by `transport`.
    static func transport(
        challenge: String? = #"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="tools""#,
        metadataPath: String = "/.well-known/oauth-protected-resource/mcp",
        resource: String = server, authorizationServer: String = "https://auth.example.com",
        registration: Bool = true
    ) -> RecordingTransport {
        let transport = RecordingTransport()
        transport.route("/mcp") { _ in
            .success(HTTPResponse(status: 401, headers: challenge.map { [("WWW-Authenticate", $0)] } ?? [], body: []))
        }
        transport.route(
            metadataPath,
            json: #"{"resource": "\#(resource)", "authorization_servers": ["\#(authorizationServer)"], "scopes_supported": ["a", "b"]}"#)
        transport.route("/.well-known/oauth-authorization-server") { _ in .success(HTTPResponse(status: 404, body: [])) }
        let registrationEndpoint = registration ? #", "registration_endpoint": "https://auth.example.com/register""# : ""
        transport.route(
            "/.well-known/openid-configuration",
            json: #"""
                {"issuer": "\#(authorizationServer)", "authorization_endpoint": "https://auth.example.com/authorize",
                 "token_endpoint": "https://auth.example.com/token", "jwks_uri": "https://auth.example.com/jwks"\#(registrationEndpoint)}
                """#)
        return transport
    }

    static func draft(
        _ transport: RecordingTransport, url: String = server, scopes: [String]? = nil, clientID: String? = nil,
        clientMetadataURL: String? = nil
    ) async throws -> ProviderDraft {
        try await MCPServerDiscovery(engine: OAuthEngine(transport: transport)).draft(
            for: url, name: "mcp", scopes: scopes, clientID: clientID, clientMetadataURL: clientMetadataURL)
    }

    static func error(_ transport: RecordingTransport, url: String = server) async -> MCPDiscoveryError? {
        do {
            _ = try await draft(transport, url: url)
            return nil
        } catch {
            return error as? MCPDiscoveryError
        }
    }

    @Test("the challenge's metadata names the authorization server, whose OpenID discovery offers registration")
    func discovered() async throws {
        let transport = Self.transport()
        let draft = try await Self.draft(transport)
        #expect(draft.issuer == "https://auth.example.com")
        #expect(draft.isOpenID && draft.registersDynamically && draft.clientID == nil)
        #expect(draft.resources == [Self.server] && draft.mcpURL == Self.server)
        #expect(draft.scopes == ["tools"])
        // The first request carries no token: an MCP initialize, as a client's first is.
        let first = try #require(transport.sent.first)
        #expect(first.method == .post && first.header("Authorization") == nil)
        // The file it becomes loads, with mcp_url among the resources.
        let provider = try #require(draft.blankProvider())
        #expect(provider.client.choices.mcpURL?.absoluteString == Self.server)
        #expect(provider.client.choices.resources == [Self.server] && provider.client.choices.registration == .dynamic)
    }

    @Test("without resource_metadata, the well-known path inserted before the URL's path is read, then the root")
    func wellKnownOrder() async throws {
        let transport = Self.transport(challenge: "Bearer", metadataPath: "/.well-known/oauth-protected-resource")
        let draft = try await Self.draft(transport)
        #expect(draft.scopes == ["a", "b"], "no scope in the challenge: the metadata's scopes_supported")
        let paths = transport.sent.map(\.url.path).filter { $0.hasPrefix("/.well-known/oauth-protected-resource") }
        #expect(paths == ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"])
        #expect(
            ProtectedResourceMetadata.wellKnownURLs(for: URL(string: "https://resource.example.com/resource1")!).map(\.absoluteString) == [
                "https://resource.example.com/.well-known/oauth-protected-resource/resource1",
                "https://resource.example.com/.well-known/oauth-protected-resource",
            ])
    }

    @Test("an authorization server found by RFC 8414 is kind oauth2; scopes given win over the challenge's")
    func rfc8414() async throws {
        let transport = Self.transport()
        transport.route(
            "/.well-known/oauth-authorization-server",
            json: #"""
                {"issuer": "https://auth.example.com", "authorization_endpoint": "https://auth.example.com/authorize",
                 "token_endpoint": "https://auth.example.com/token", "registration_endpoint": "https://auth.example.com/register"}
                """#)
        let draft = try await Self.draft(transport, scopes: ["x"])
        #expect(!draft.isOpenID && draft.scopes == ["x"])
        #expect(transport.sent(to: "/.well-known/openid-configuration").isEmpty)
    }

    @Test("metadata for another resource is refused (RFC 9728 §3.3); case and a default port are no difference")
    func otherResource() async throws {
        let error = await Self.error(Self.transport(resource: "https://evil.example.com/mcp"))
        #expect(error == .otherResource(expected: Self.server, named: "https://evil.example.com/mcp"))
        #expect(await Self.error(Self.transport(resource: "https://mcp.example.com/other")) != nil)
        let same = try await Self.draft(Self.transport(resource: "HTTPS://MCP.Example.COM:443/mcp"))
        #expect(same.mcpURL == Self.server)
    }

    @Test("a remote server's resource_metadata on loopback is refused before it is fetched")
    func loopbackMetadata() async throws {
        let transport = Self.transport(
            challenge: #"Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp""#)
        let error = await Self.error(transport)
        guard case .badURL(field: "resource_metadata", let problem)? = error else {
            Issue.record("not refused: \(String(describing: error))")
            return
        }
        #expect(problem.contains("127.0.0.1"))
        #expect(transport.sent.allSatisfy { $0.url.host != "127.0.0.1" })
    }

    @Test("a remote server's authorization server on loopback is refused before it is asked anything")
    func loopbackAuthorizationServer() async throws {
        let transport = Self.transport(authorizationServer: "http://localhost:9000")
        guard case .badURL(field: "authorization_servers", _)? = await Self.error(transport) else {
            Issue.record("a loopback authorization server was taken")
            return
        }
        #expect(transport.sent.allSatisfy { $0.url.host != "localhost" })
    }

    @Test("a server that answers without asking for a sign-in, or without a Bearer challenge, is refused")
    func notProtected() async throws {
        let open = RecordingTransport()
        open.route("/mcp", json: "{}")
        #expect(await Self.error(open) == .noSignInAsked(status: 200))
        #expect(await Self.error(Self.transport(challenge: nil)) == .badChallenge)
        #expect(await Self.error(Self.transport(challenge: #"Bearer realm="x"#)) == .badChallenge)
    }

    @Test("a scope from the server that is no RFC 6749 scope-token is refused, not written into the file")
    func badScope() async throws {
        let transport = Self.transport(
            challenge: #"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="a\"b""#)
        #expect(await Self.error(transport) == .badScope(#"a"b"#))
        #expect(transport.sent(to: "/.well-known/openid-configuration").isEmpty)
    }

    @Test("an authorization server without registration needs --client-id, which it then records")
    func noRegistration() async throws {
        #expect(await Self.error(Self.transport(registration: false)) == .noRegistration(issuer: "https://auth.example.com"))
        let draft = try await Self.draft(Self.transport(registration: false), clientID: "given")
        #expect(draft.clientID == "given" && !draft.registersDynamically)
        #expect(try #require(draft.blankProvider()).client.clientID == "given")
    }

    static let clientMetadataURL = "https://client.example.net/latchkey/client.json"

    /// An authorization server found by RFC 8414 whose metadata is the Client ID Metadata
    /// Document draft's example (§6), with `client_id_metadata_document_supported` as given.
    static func cimdTransport(supported: Bool) -> RecordingTransport {
        let transport = Self.transport()
        transport.route(
            "/.well-known/oauth-authorization-server",
            json: #"""
                {"issuer": "https://auth.example.com", "authorization_endpoint": "https://auth.example.com/authorize",
                 "token_endpoint": "https://auth.example.com/token", "registration_endpoint": "https://auth.example.com/register",
                 "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
                 "client_id_metadata_document_supported": \#(supported)}
                """#)
        return transport
    }

    @Test("--client-metadata-url is the client ID where the server takes metadata documents: no registration")
    func clientMetadataDocument() async throws {
        let transport = Self.cimdTransport(supported: true)
        let draft = try await Self.draft(transport, clientMetadataURL: Self.clientMetadataURL)
        #expect(draft.clientID == Self.clientMetadataURL && !draft.registersDynamically && !draft.isOpenID)
        let provider = try #require(draft.blankProvider())
        #expect(provider.client.clientID == Self.clientMetadataURL && provider.client.choices.registration != .dynamic)
        #expect(transport.sent(to: "/register").isEmpty)
        // --client-id still wins: it is a client the person registered.
        #expect(try await Self.draft(transport, clientID: "given", clientMetadataURL: Self.clientMetadataURL).clientID == "given")
    }

    @Test("--client-metadata-url at a server that does not say it takes one is refused, not replaced by registration")
    func clientMetadataDocumentNotOffered() async throws {
        for transport in [Self.cimdTransport(supported: false), Self.transport()] {
            await #expect(throws: MCPDiscoveryError.noClientMetadataDocuments(issuer: "https://auth.example.com")) {
                try await Self.draft(transport, clientMetadataURL: Self.clientMetadataURL)
            }
            #expect(transport.sent(to: "/register").isEmpty)
        }
    }

    @Test(
        "a --client-metadata-url no document can be named by is refused before any request",
        arguments: [
            "http://client.example.net/client.json", "https://client.example.net", "https://client.example.net/",
            "https://user:pw@client.example.net/client.json", "https://client.example.net/client.json#frag", "client.json",
            #"https://client.example.net/a"b.json"#, "https://client.example.net/a\\b.json",
        ])
    func badClientMetadataURL(raw: String) async throws {
        let transport = Self.cimdTransport(supported: true)
        let error = await #expect(throws: MCPDiscoveryError.self) { try await Self.draft(transport, clientMetadataURL: raw) }
        guard case .badClientMetadataURL = error else {
            Issue.record("not refused as a bad --client-metadata-url: \(String(describing: error))")
            return
        }
        #expect(error?.category == .usage)
        #expect(transport.sent.isEmpty)
    }

    @Test("a URL that is plain http elsewhere than loopback is refused before any request")
    func insecureURL() async throws {
        let transport = Self.transport()
        guard case .badURL(field: nil, _)? = await Self.error(transport, url: "http://mcp.example.com/mcp") else {
            Issue.record("plain http was taken")
            return
        }
        #expect(transport.sent.isEmpty)
    }
}

@Suite("Provider files: mcp_url")
struct MCPURLKeyTests {
    static let base = """
        display_name = "MCP"
        kind = "oidc"
        issuer = "https://auth.example.com"
        registration = "dynamic"

        """

    @Test("mcp_url listed in resources loads; missing from them it is an error on its line")
    func amongResources() throws {
        let loaded = ProviderFileParser().parse(
            Self.base + "resources = [\"https://mcp.example.com/mcp\"]\nmcp_url = \"https://mcp.example.com/mcp\"\n", file: "/p/m.toml")
        #expect(try loaded.get().asOAuth.client.choices.mcpURL?.absoluteString == "https://mcp.example.com/mcp")
        guard
            case .failure(let failure) = ProviderFileParser().parse(
                Self.base + "mcp_url = \"https://mcp.example.com/mcp\"\n", file: "/p/m.toml")
        else {
            Issue.record("mcp_url outside resources loaded")
            return
        }
        #expect(failure.errors.map(\.field) == ["mcp_url"] && failure.errors.first?.line == 5)
    }

    @Test("mcp_url follows the endpoint rules: plain http only on loopback")
    func endpointRules() {
        let text = Self.base + "resources = [\"http://mcp.example.com/mcp\"]\nmcp_url = \"http://mcp.example.com/mcp\"\n"
        guard case .failure(let failure) = ProviderFileParser().parse(text, file: "/p/m.toml") else {
            Issue.record("plain http mcp_url loaded")
            return
        }
        #expect(failure.errors.contains { $0.field == "mcp_url" && $0.message.contains("https") })
    }
}
