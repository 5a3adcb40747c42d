import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// DPoP (RFC 9449): proofs checked against the RFC's own examples, then sign-in, refresh and the
/// nonce dance against the in-memory server.
@Suite("DPoP proofs and bound tokens")
struct DPoPTests {
    // MARK: - RFC 9449's examples

    /// The public key of RFC 9449's examples (§4.1 Figure 3, §6.1).
    static let exampleKey = DPoPKey.PublicJWK(
        x: "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs", y: "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA")
    /// The token request's proof, RFC 9449 §4.1 Figure 3 (and §5 Figure 6).
    static let exampleProof =
        "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19"
        + ".eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ"
        + ".2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg"

    @Test("the example key's JWK thumbprint is RFC 9449's jkt (§6.1)")
    func exampleThumbprint() {
        #expect(Self.exampleKey.thumbprint == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
    }

    @Test("ath of RFC 9449's example access token is the RFC's (§7.1)")
    func exampleAccessTokenHash() {
        #expect(
            DPoPKey.accessTokenHash(Secret("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU")) == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
    }

    @Test(
        "Latchkey's header and claims for the RFC's request are the RFC's proof's, member for member, and its ES256 signature format verifies"
    )
    func exampleProofShape() throws {
        let parts = Self.exampleProof.split(separator: ".").map(String.init)
        let ownHeader = try Self.object(JSONEncoder().encode(DPoPKey.Header(jwk: Self.exampleKey)))
        let ownClaims = try Self.object(
            JSONEncoder().encode(
                DPoPKey.Claims(jti: "-BwC3ESc6acc2lTc", htm: "POST", htu: "https://server.example.com/token", iat: 1_562_262_616)))
        #expect(ownHeader == (try Self.object(#require(Base64URL.decode(parts[0])))))
        #expect(ownClaims == (try Self.object(#require(Base64URL.decode(parts[1])))))
        // The RFC's signature is R || S, the form Latchkey signs in: it verifies as ES256 under the example key.
        let keys = try JSONWebKeySet(
            json: Array(#"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(Self.exampleKey.x)","y":"\#(Self.exampleKey.y)"}]}"#.utf8))
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(keys.keys[0].verify(Array(signature), over: Array((parts[0] + "." + parts[1]).utf8), algorithm: .es256))
    }

    // MARK: - Latchkey's proofs

    @Test("a proof verifies under the key in its own header, names the request without its query, and never repeats a jti")
    func ownProof() throws {
        let key = DPoPKey()
        let url = try #require(URL(string: "https://rs.example/api/items?page=2#top"))
        let time = Date(timeIntervalSince1970: 1_750_000_000)
        let proof = key.proof(method: "GET", url: url, at: time, nonce: "n-1", accessToken: Secret("at-1"))
        let parts = proof.split(separator: ".").map(String.init)
        let header = try Self.object(#require(Base64URL.decode(parts[0])))
        let claims = try Self.object(#require(Base64URL.decode(parts[1])))
        #expect(header["typ"] as? String == "dpop+jwt" && header["alg"] as? String == "ES256")
        let jwk = try #require(header["jwk"] as? [String: Any])
        #expect(jwk.keys.sorted() == ["crv", "kty", "x", "y"], "the public key only, never d")
        #expect(claims["htm"] as? String == "GET" && claims["htu"] as? String == "https://rs.example/api/items")
        #expect(claims["iat"] as? Int == 1_750_000_000 && claims["nonce"] as? String == "n-1")
        #expect(claims["ath"] as? String == DPoPKey.accessTokenHash(Secret("at-1")))
        let publicKey = try P256.Signing.PublicKey(
            rawRepresentation: try #require(Base64URL.decode(jwk["x"] as! String)) + (try #require(Base64URL.decode(jwk["y"] as! String))))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
        let again = key.proof(method: "GET", url: url, at: time)
        #expect(Self.claims(again)["jti"] as? String != claims["jti"] as? String)
        #expect(Self.claims(again)["ath"] == nil && Self.claims(again)["nonce"] == nil)
    }

    @Test("the key round-trips through what the vault keeps, and a damaged one is refused")
    func storedKey() throws {
        let key = DPoPKey()
        #expect(try DPoPKey(stored: key.stored).thumbprint == key.thumbprint)
        #expect(throws: DPoPError.unreadableKey) { try DPoPKey(stored: Secret("not-a-key")) }
    }

    // MARK: - Sign-in and refresh

    @Test("a sign-in at a server listing ES256 binds the code with dpop_jkt, proves the same key at the exchange, and keeps the key")
    func boundSignIn() async throws {
        let server = FakeAuthorizationServer(discovery: FakeAuthorizationServer.advertisesES256)
        let keystore = InMemoryKeystore()
        let (record, _) = try await server.service(keystore: keystore).signIn(
            provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let stored = try #require(record.dpopKey)
        let key = try DPoPKey(stored: stored)
        let authorization = FakeAuthorizationServer.query(try #require(server.browser.urls.first))
        #expect(authorization["dpop_jkt"] == key.thumbprint)
        let exchange = try #require(server.transport.sent(to: "/token").first)
        let proof = try #require(exchange.header("DPoP"))
        let jwk = try #require(FakeAuthorizationServer.header(ofJWT: proof)?["jwk"] as? [String: String])
        #expect(DPoPKey.PublicJWK(x: jwk["x"] ?? "", y: jwk["y"] ?? "").thumbprint == key.thumbprint)
        #expect(FakeAuthorizationServer.claims(ofJWT: proof)?["htu"] as? String == "https://corp.example/token")
        #expect(record.tokenType == "DPoP" && record.isProofBound)
        #expect(try await keystore.records().first?.dpopKey == stored)

        _ = try await server.service(keystore: keystore).refresh(AccountSelector(provider: "corp"))
        let refresh = try #require(server.transport.sent(to: "/token").last)
        #expect(refresh.form["grant_type"] == "refresh_token")
        let refreshJWK = FakeAuthorizationServer.header(ofJWT: try #require(refresh.header("DPoP")))?["jwk"] as? [String: String]
        #expect(refreshJWK == jwk, "the refresh proves the account's own key")
    }

    @Test("dpop = never, or a server that does not list ES256, gives bearer tokens and no key")
    func notBound() async throws {
        for (discovery, choice) in [
            (FakeAuthorizationServer.advertisesES256, ProtocolChoices.Use.never),
            (#""dpop_signing_alg_values_supported":["RS256"]"#, .auto),
        ] {
            let server = FakeAuthorizationServer(discovery: discovery, choices: ProtocolChoices(proofOfPossession: choice))
            let (record, _) = try await server.service(keystore: InMemoryKeystore()).signIn(
                provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
            #expect(record.dpopKey == nil && record.tokenType == "Bearer")
            #expect(FakeAuthorizationServer.query(try #require(server.browser.urls.first))["dpop_jkt"] == nil)
            #expect(server.transport.sent(to: "/token").allSatisfy { $0.header("DPoP") == nil })
        }
    }

    @Test("dpop = always at a server whose algorithms leave out ES256 fails before the browser opens")
    func alwaysWithoutES256() async throws {
        let server = FakeAuthorizationServer(
            discovery: #""dpop_signing_alg_values_supported":["PS256"]"#, choices: ProtocolChoices(proofOfPossession: .always))
        await #expect(throws: ProtocolChoiceError.noES256(provider: "corp")) {
            try await server.service(keystore: InMemoryKeystore()).signIn(
                provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        }
        #expect(server.browser.urls.isEmpty)
    }

    @Test("use_dpop_nonce is answered once with the server's nonce, and the sign-in completes")
    func nonceRetry() async throws {
        let server = FakeAuthorizationServer(discovery: FakeAuthorizationServer.advertisesES256)
        server.requireDPoPNonce("server-nonce-1")
        let (record, _) = try await server.service(keystore: InMemoryKeystore()).signIn(
            provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let attempts = server.transport.sent(to: "/token")
        #expect(attempts.count == 2)
        #expect(FakeAuthorizationServer.claims(ofJWT: attempts[0].header("DPoP") ?? "")?["nonce"] == nil)
        #expect(FakeAuthorizationServer.claims(ofJWT: attempts[1].header("DPoP") ?? "")?["nonce"] as? String == "server-nonce-1")
        #expect(attempts[0].form["code"] == attempts[1].form["code"])
        #expect(record.isProofBound)
    }

    @Test("a server that asks for a new nonce again is refused after one retry: two requests, then its error")
    func nonceRetryIsBounded() async throws {
        let server = FakeAuthorizationServer(discovery: FakeAuthorizationServer.advertisesES256)
        server.transport.route("/token") { _ in
            .success(
                HTTPResponse(
                    status: 400, headers: [("Content-Type", "application/json"), ("DPoP-Nonce", "\(UUID().uuidString)")],
                    body: Array(#"{"error":"use_dpop_nonce"}"#.utf8)))
        }
        let keystore = InMemoryKeystore()
        await #expect(throws: TokenEndpointError.oauth(endpoint: "token endpoint", OAuthErrorResponse(error: "use_dpop_nonce"))) {
            try await server.service(keystore: keystore).signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        }
        #expect(server.transport.sent(to: "/token").count == 2)
        #expect(try await keystore.records().isEmpty)
    }

    @Test("a use_dpop_nonce whose DPoP-Nonce is missing or holds a space is not retried")
    func unusableNonce() {
        let body = Array(#"{"error":"use_dpop_nonce"}"#.utf8)
        #expect(DPoPNonce.requested(by: HTTPResponse(status: 400, headers: [("dpop-nonce", "abc")], body: body)) == "abc")
        #expect(DPoPNonce.requested(by: HTTPResponse(status: 400, body: body)) == nil)
        #expect(DPoPNonce.requested(by: HTTPResponse(status: 400, headers: [("DPoP-Nonce", "a b")], body: body)) == nil)
        #expect(
            DPoPNonce.requested(
                by: HTTPResponse(status: 400, headers: [("DPoP-Nonce", "abc")], body: Array(#"{"error":"invalid_grant"}"#.utf8))) == nil)
    }

    @Test("a refresh of a DPoP-bound account that lost its key is refused before anything is sent")
    func refreshWithoutKey() async throws {
        let server = FakeAuthorizationServer()
        var record = AccountRecord.testing(provider: "corp")
        record.tokenType = "DPoP"
        record.expiresAt = server.clock.now().addingTimeInterval(-10)
        let keystore = InMemoryKeystore([record])
        await #expect(throws: DPoPError.missingKey(account: record.label, provider: "corp")) {
            try await server.service(keystore: keystore).validToken(
                for: AccountSelector(provider: "corp"), minimumLifetime: 60, idToken: false)
        }
        #expect(server.transport.sent(to: "/token").isEmpty)
    }

    @Test("latchkey proof's proof carries ath for the token sent, and a bearer account gets none")
    func resourceProof() async throws {
        let server = FakeAuthorizationServer(discovery: FakeAuthorizationServer.advertisesES256)
        let service = server.service(keystore: InMemoryKeystore())
        let (record, _) = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let url = try #require(URL(string: "https://api.example/v1/me"))
        let proof = try service.proof(for: record, token: record.accessToken, method: "GET", url: url, nonce: nil)
        #expect(Self.claims(proof)["ath"] as? String == DPoPKey.accessTokenHash(record.accessToken))
        #expect(throws: DPoPError.notBound(account: "alice", provider: "corp")) {
            try service.proof(
                for: AccountRecord.testing(provider: "corp", displayName: "alice"), token: Secret("t"), method: "GET", url: url, nonce: nil)
        }
    }

    // MARK: - Helpers

    /// A JSON object, as a dictionary that compares member for member (nested objects too).
    static func object(_ data: Data) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: data) as? NSDictionary)
    }

    static func claims(_ jwt: String) -> [String: Any] { FakeAuthorizationServer.claims(ofJWT: jwt) ?? [:] }
}
