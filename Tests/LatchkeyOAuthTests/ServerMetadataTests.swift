import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySupport

@Suite("Server metadata: discovery and explicit endpoints (OIDC Discovery §3, RFC 8414)")
struct ServerMetadataTests {
    static let issuer = "https://idp.example.com/realms/main"

    static func document(_ fixture: String) throws -> DiscoveryDocument {
        try JSONDecoder().decode(DiscoveryDocument.self, from: Data(try fixtures.bytes("discovery/\(fixture)")))
    }

    static func document(json: String) throws -> DiscoveryDocument {
        try JSONDecoder().decode(DiscoveryDocument.self, from: Data(json.utf8))
    }

    static func discoveringProvider(issuer: String = issuer, isOpenID: Bool = true, endpoints: OAuthClient.Endpoints = .init())
        -> OAuthProvider
    {
        .testing(name: "example", issuer: issuer, endpoints: endpoints, isOpenID: isOpenID)
    }

    @Test("a discovery document for the configured issuer gives every endpoint and the iss promise")
    func resolved() throws {
        let metadata = try ServerMetadata.resolve(provider: Self.discoveringProvider(), document: try Self.document("idp-example.json"))
        let base = Self.issuer + "/protocol/openid-connect"
        #expect(metadata.issuer == Self.issuer)
        #expect(metadata.authorizationEndpoint.absoluteString == base + "/auth")
        #expect(metadata.tokenEndpoint.absoluteString == base + "/token")
        #expect(metadata.revocationEndpoint?.absoluteString == base + "/revoke")
        #expect(metadata.deviceAuthorizationEndpoint?.absoluteString == base + "/auth/device")
        #expect(metadata.userinfoEndpoint?.absoluteString == base + "/userinfo")
        #expect(metadata.jwksURI?.absoluteString == base + "/certs")
        #expect(metadata.requiresIssuerParameter)
    }

    @Test("a discovery document naming another issuer is rejected, a trailing slash included")
    func issuerMismatch() throws {
        let document = try Self.document("idp-example.json")
        #expect(throws: DiscoveryError.issuerMismatch(provider: "example", configured: Self.issuer + "/", discovered: Self.issuer)) {
            try ServerMetadata.resolve(provider: Self.discoveringProvider(issuer: Self.issuer + "/"), document: document)
        }
        #expect(throws: DiscoveryError.self) {
            try ServerMetadata.resolve(provider: Self.discoveringProvider(issuer: "https://other.example.com"), document: document)
        }
    }

    @Test("explicit endpoints from the provider file override discovered ones")
    func explicitOverride() throws {
        let endpoints = OAuthClient.Endpoints(
            token: URL(string: "https://proxy.example.com/token"), userinfo: URL(string: "https://api.example.com/me"))
        let metadata = try ServerMetadata.resolve(
            provider: Self.discoveringProvider(endpoints: endpoints), document: try Self.document("idp-example.json"))
        #expect(metadata.tokenEndpoint.absoluteString == "https://proxy.example.com/token")
        #expect(metadata.userinfoEndpoint?.absoluteString == "https://api.example.com/me")
        #expect(metadata.authorizationEndpoint.absoluteString == Self.issuer + "/protocol/openid-connect/auth")
    }

    @Test("a server that lists PKCE methods without S256 is rejected")
    func noS256() throws {
        #expect(throws: DiscoveryError.noPKCE(provider: "example")) {
            try ServerMetadata.resolve(provider: Self.discoveringProvider(), document: try Self.document("plain-only.json"))
        }
    }

    @Test("a server that does not list PKCE methods at all is accepted, and promises no iss")
    func pkceUnlisted() throws {
        let document = try Self.document(
            json: """
                {"issuer":"\(Self.issuer)","authorization_endpoint":"https://idp.example.com/a","token_endpoint":"https://idp.example.com/t","jwks_uri":"https://idp.example.com/k"}
                """)
        let metadata = try ServerMetadata.resolve(provider: Self.discoveringProvider(), document: document)
        #expect(!metadata.requiresIssuerParameter)
    }

    @Test("a discovered endpoint over plain http to a remote host is rejected")
    func insecureDiscoveredEndpoint() throws {
        let document = try Self.document(
            json: """
                {"issuer":"\(Self.issuer)","authorization_endpoint":"https://idp.example.com/a","token_endpoint":"http://idp.example.com/t","jwks_uri":"https://idp.example.com/k"}
                """)
        #expect {
            try ServerMetadata.resolve(provider: Self.discoveringProvider(), document: document)
        } throws: { error in
            guard case .badEndpoint(_, let field, _) = error as? DiscoveryError else { return false }
            return field == "token_endpoint"
        }
    }

    @Test("a remote issuer's discovery naming an address on this machine is rejected, in every notation")
    func remoteIssuerPointingAtLoopback() throws {
        let hosts = [
            "127.0.0.1:8200", "localhost", "vault.localhost", "127.1", "0x7f000001", "2130706433", "0177.0.0.1", "0.0.0.0",
            "[::1]", "[::ffff:127.0.0.1]", "[::]", "LOCALHOST.",
        ]
        for host in hosts {
            for scheme in ["https", "http"] {
                let document = try Self.document(
                    json: """
                        {"issuer":"\(Self.issuer)","authorization_endpoint":"https://idp.example.com/a","token_endpoint":"\(scheme)://\(host)/t","jwks_uri":"https://idp.example.com/k"}
                        """)
                #expect("\(scheme)://\(host)") {
                    try ServerMetadata.resolve(provider: Self.discoveringProvider(), document: document)
                } throws: { error in
                    guard case .badEndpoint(_, let field, _) = error as? DiscoveryError else { return false }
                    return field == "token_endpoint"
                }
            }
        }
    }

    @Test("an issuer on loopback may name loopback endpoints; a remote one may name other remote hosts")
    func loopbackIssuerKeepsLoopbackEndpoints() throws {
        let local = try Self.document(
            json: """
                {"issuer":"http://127.0.0.1:9000","authorization_endpoint":"http://127.0.0.1:9000/a","token_endpoint":"http://localhost:9000/t","jwks_uri":"http://[::1]:9000/k"}
                """)
        let metadata = try ServerMetadata.resolve(provider: Self.discoveringProvider(issuer: "http://127.0.0.1:9000"), document: local)
        #expect(metadata.tokenEndpoint.absoluteString == "http://localhost:9000/t")
        let remote = try Self.document(
            json: """
                {"issuer":"\(Self.issuer)","authorization_endpoint":"https://login.example.net/a","token_endpoint":"https://127.example.net/t","jwks_uri":"https://10.0.0.7/k"}
                """)
        #expect(try ServerMetadata.resolve(provider: Self.discoveringProvider(), document: remote).tokenEndpoint.host == "127.example.net")
    }

    @Test("loopback is recognised in the notations libcurl accepts, and nothing else is")
    func loopbackNotations() {
        for host in [
            "127.0.0.1", "127.255.0.9", "127.1", "0x7f.1", "0x7f000001", "2130706433", "017700000001", "0", "0x", "0.0.0.0", "::1", "[::1]",
            "::", "::ffff:127.0.0.1", "[::ffff:7f00:1]", "0:0:0:0:0:0:0:1", "localhost", "a.b.localhost", "LocalHost.",
        ] {
            #expect(EndpointURL.isLoopback(host), "\(host)")
        }
        for host in [
            "128.0.0.1", "126.255.255.255", "1.2.3.4", "127.0.0.1.example.com", "localhost.example.com", "::2", "::ffff:10.0.0.1",
            "example", "127.0.0.256", "4294967296", "0xg", "fe80::1", "notlocalhost",
        ] {
            #expect(!EndpointURL.isLoopback(host), "\(host)")
        }
    }

    @Test("an oidc provider without a jwks_uri anywhere is rejected")
    func missingJWKS() throws {
        let document = try Self.document(
            json: """
                {"issuer":"\(Self.issuer)","authorization_endpoint":"https://idp.example.com/a","token_endpoint":"https://idp.example.com/t"}
                """)
        #expect(throws: DiscoveryError.missingEndpoint(provider: "example", field: "jwks_uri")) {
            try ServerMetadata.resolve(provider: Self.discoveringProvider(), document: document)
        }
    }

    @Test("a provider file listing every endpoint needs no discovery document")
    func noDiscovery() throws {
        let provider = OAuthProvider.testing(
            name: "github", issuer: nil,
            endpoints: .init(
                authorization: URL(string: "https://github.com/login/oauth/authorize"),
                token: URL(string: "https://github.com/login/oauth/access_token")), isOpenID: false)
        #expect(ServerMetadata.discoveryURL(for: provider) == nil)
        let metadata = try ServerMetadata.resolve(provider: provider, document: nil)
        #expect(metadata.issuer == nil)
        #expect(metadata.tokenEndpoint.absoluteString == "https://github.com/login/oauth/access_token")
    }

    // MARK: - Where discovery is read

    @Test("an oidc issuer's discovery document is appended to the issuer")
    func oidcDiscoveryURL() {
        #expect(
            ServerMetadata.discoveryURL(for: Self.discoveringProvider())?.absoluteString == Self.issuer
                + "/.well-known/openid-configuration")
        #expect(
            ServerMetadata.discoveryURL(for: Self.discoveringProvider(issuer: "https://idp.example.com/"))?.absoluteString
                == "https://idp.example.com/.well-known/openid-configuration")
    }

    @Test("an oauth2 issuer's well-known segment goes before its path (RFC 8414 §3.1)")
    func oauth2DiscoveryURL() {
        #expect(
            ServerMetadata.discoveryURL(for: Self.discoveringProvider(issuer: "https://as.example.com/tenant1", isOpenID: false))?
                .absoluteString
                == "https://as.example.com/.well-known/oauth-authorization-server/tenant1")
        #expect(
            ServerMetadata.discoveryURL(for: Self.discoveringProvider(issuer: "https://as.example.com/tenant1/", isOpenID: false))?
                .absoluteString
                == "https://as.example.com/.well-known/oauth-authorization-server/tenant1")
        #expect(
            ServerMetadata.discoveryURL(for: Self.discoveringProvider(issuer: "https://as.example.com", isOpenID: false))?.absoluteString
                == "https://as.example.com/.well-known/oauth-authorization-server")
    }
}
