import Foundation
import LatchkeyBrokerWire
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyBroker
@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// The agent's `dpop-proof` judge, part by part: what a request must be before any account is
/// chosen, which URL a forwarded host may have proofs for, that the release rule refuses the
/// rest before anyone is asked, and that a proof is signed only for the account's current token.
@Suite("The agent's DPoP proofs for its clients")
struct AgentProofTests {
    static let server = "https://mcp.example.com/mcp"
    static let hash = DPoPKey.accessTokenHash(Secret("at-1"))

    static func provider(mcpURL: String? = server) throws -> Provider {
        var text = """
            display_name = "MCP"
            kind = "oidc"
            issuer = "https://auth.example.com"
            registration = "dynamic"
            resources = ["\(server)", "https://api.example.com/"]

            """
        if let mcpURL { text += "mcp_url = \"\(mcpURL)\"\n" }
        return try ProviderFileParser().parse(text, file: "/p/m.toml").get()
    }

    static func target(_ method: String = "POST", _ url: String = server, nonce: String? = nil, hash: String = hash)
        -> ProofRequest
    {
        ProofRequest(selector: "mcp", method: method, url: url, nonce: nonce, tokenHash: hash)
    }

    @Test("a well-formed request gives its method and URL; a bad method, URL, nonce or ath is malformed before any account is chosen")
    func checked() throws {
        let (method, url) = try Self.target(nonce: "n-1").checked()
        #expect(method == "POST" && url.absoluteString == Self.server)
        let bad: [ProofRequest] = [
            Self.target("post"), Self.target(""), Self.target("GET\r\nX"), Self.target(String(repeating: "A", count: 17)),
            Self.target("POST", "mcp.example.com/mcp"), Self.target("POST", "file:///etc/passwd"), Self.target("POST", "https:///mcp"),
            Self.target("POST", "https://mcp.example.com/" + String(repeating: "a", count: 2048)),
            Self.target(nonce: ""), Self.target(nonce: "a b"), Self.target(nonce: "a\"b"),
            Self.target(nonce: String(repeating: "n", count: 513)),
            Self.target(hash: ""), Self.target(hash: "not+a/hash"), Self.target(hash: String(repeating: "x", count: 44)),
            Self.target(hash: Self.hash + "="),
        ]
        for target in bad {
            #expect(throws: BrokerError.self, "\(target)") { try target.checked() }
        }
    }

    @Test("only the provider file's mcp_url is named, compared as a canonical URI without query or fragment")
    func named() throws {
        let provider = try Self.provider()
        for same in [
            Self.server, "HTTPS://MCP.example.com/mcp", "https://mcp.example.com:443/mcp", Self.server + "?page=2", Self.server + "#x",
        ] {
            #expect(ProofRequest.isNamed(try #require(URL(string: same)), by: provider), "\(same)")
        }
        for other in [
            "https://mcp.example.com/mcp/", "https://mcp.example.com/MCP", "https://mcp.example.com/mcp/other",
            "http://mcp.example.com/mcp",
            "https://mcp.example.com:8443/mcp", "https://evil.example.com/mcp", "https://api.example.com/",
        ] {
            #expect(!ProofRequest.isNamed(try #require(URL(string: other)), by: provider), "\(other)")
        }
        let url = try #require(URL(string: Self.server))
        #expect(!ProofRequest.isNamed(url, by: try Self.provider(mcpURL: nil)))
        #expect(!ProofRequest.isNamed(url, by: nil))
    }

    @Test("a forwarded host is refused a proof for an unnamed URL before a confirm = true account's person is asked; local clients are not")
    func releaseRule() {
        let forwarded = ReleaseDecision(
            account: "mcp:alice", provider: "mcp", door: .agent(forwarded: true), forward: true, confirm: true, confirmSeconds: 30)
        #expect(
            forwarded.chosen(naming: [.proofURL: false]) == [
                .log(.refused, reason: "a DPoP proof for a URL the provider file does not name"),
                .refuse(.notListed(.proofURL, provider: "mcp")),
            ])
        #expect(forwarded.chosen(naming: [.proofURL: true]) == [.ask(seconds: 30)])
        let unshared = ReleaseDecision(
            account: "mcp:alice", provider: "mcp", door: .agent(forwarded: true), forward: false, confirm: false, confirmSeconds: 30)
        #expect(unshared.chosen(naming: [.proofURL: true]) == ReleaseDecision.noSharedAccount)
        let local = ReleaseDecision(
            account: "mcp:alice", provider: "mcp", door: .agent(forwarded: false), forward: false, confirm: false, confirmSeconds: 30)
        #expect(local.chosen(naming: [.proofURL: false]) == [.fetchToken])
        #expect(ReleaseRefusal.notListed(.proofURL, provider: "mcp").description.contains("(mcp_url)"))
    }

    @Test("a proof is signed for the account's current token only; for any other token's hash nothing is signed")
    func currentTokenOnly() async throws {
        let server = FakeAuthorizationServer(discovery: FakeAuthorizationServer.advertisesES256)
        let service = server.service(keystore: InMemoryKeystore())
        let (record, _) = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let url = try #require(URL(string: Self.server))
        let proof = try service.proof(
            for: record, tokenHash: DPoPKey.accessTokenHash(record.accessToken), method: "POST", url: url, nonce: "n-1")
        let claims = FakeAuthorizationServer.claims(ofJWT: proof) ?? [:]
        #expect(claims["ath"] as? String == DPoPKey.accessTokenHash(record.accessToken))
        #expect(claims["htm"] as? String == "POST" && claims["htu"] as? String == Self.server && claims["nonce"] as? String == "n-1")
        #expect(throws: DPoPError.notCurrentToken(account: record.label, provider: record.provider)) {
            try service.proof(for: record, tokenHash: Self.hash, method: "POST", url: url, nonce: nil)
        }
    }
}
