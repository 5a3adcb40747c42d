import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// A plain OAuth 2.0 server with no userinfo endpoint (an MCP server's authorization server)
/// still gives an account with a stable identity, from the access token as far as it says.
@Suite("Accounts at an OAuth 2.0 server that names no account")
struct AccessTokenIdentityTests {
    static let issuer = "https://corp.example"

    /// A plain OAuth 2.0 provider at `issuer` whose endpoints include no userinfo.
    static let provider = Provider.testing(
        name: "mcp", issuer: issuer,
        endpoints: OAuthClient.Endpoints(
            authorization: URL(string: issuer + "/authorize"), token: URL(string: issuer + "/token"),
            revocation: URL(string: issuer + "/revoke")),
        scopes: ["tools"], isOpenID: false)

    /// A JWT-shaped token with `claims` (unsigned: the signature part is not looked at).
    static func jwt(_ claims: [String: Any]) throws -> String {
        let payload = try JSONSerialization.data(withJSONObject: claims)
        return Base64URL.encode(Array(#"{"alg":"RS256"}"#.utf8)) + "." + Base64URL.encode(payload) + ".c2lnbmF0dXJl"
    }

    /// The account the engine builds from a token response carrying `accessToken`, with a
    /// transport that answers nothing, so any request it made would be seen.
    static func account(accessToken: String, provider: Provider = provider) async throws -> (AccountRecord, RecordingTransport) {
        let transport = RecordingTransport()
        let engine = OAuthEngine(transport: transport, clock: FixedClock())
        let body = #"{"access_token":"\#(accessToken)","token_type":"Bearer","expires_in":60}"#
        let tokens = try TokenResponse.parse(HTTPResponse(status: 200, body: Array(body.utf8)), endpoint: "token endpoint")
        let metadata = try ServerMetadata.resolve(provider: provider.asOAuth, document: nil)
        return (try await engine.account(from: tokens, provider: provider.asOAuth, metadata: metadata, nonce: nil), transport)
    }

    @Test("an opaque access token gives the provider's one account, unnamed, without asking anyone")
    func opaqueToken() async throws {
        let (record, transport) = try await Self.account(accessToken: "opaque-1")
        #expect(record.issuer == Self.issuer && record.subject == "unnamed" && record.displayName == nil)
        #expect(record.label == "unnamed" && record.matches(selector: "unnamed"))
        #expect(transport.sent.isEmpty)
        let (again, _) = try await Self.account(accessToken: "opaque-2")
        #expect(again.isSameAccount(as: record))
    }

    @Test("a JWT access token from this issuer names the account by its sub, the same at every sign-in")
    func jwtFromThisIssuer() async throws {
        let (record, transport) = try await Self.account(accessToken: try Self.jwt(["iss": Self.issuer, "sub": "user-42", "jti": "1"]))
        #expect(record.subject == "user-42" && record.issuer == Self.issuer)
        #expect(transport.sent.isEmpty)
        let (again, _) = try await Self.account(accessToken: try Self.jwt(["iss": Self.issuer, "sub": "user-42", "jti": "2"]))
        #expect(again.isSameAccount(as: record))
        let (other, _) = try await Self.account(accessToken: try Self.jwt(["iss": Self.issuer, "sub": "user-43"]))
        #expect(!other.isSameAccount(as: record))
    }

    @Test(
        "a token that does not say this issuer issued it for a usable sub gives the unnamed account",
        arguments: [
            ["iss": "https://elsewhere.example", "sub": "mallory"],  // another issuer's JWT
            ["iss": "https://corp.example/", "sub": "mallory"],  // not the issuer as written
            ["sub": "mallory"],  // no issuer
            ["iss": "https://corp.example"],  // no sub
            ["iss": "https://corp.example", "sub": ""],
            ["iss": "https://corp.example", "sub": 42],
            ["iss": "https://corp.example", "sub": "mal\u{1B}[2Jlory"],  // a terminal escape
            ["iss": "https://corp.example", "sub": "mal\u{202E}lory"],  // a bidirectional override
            ["iss": "https://corp.example", "sub": String(repeating: "m", count: 256)],
        ] as [[String: any Sendable]])
    func unusableJWT(claims: [String: any Sendable]) async throws {
        let (record, _) = try await Self.account(accessToken: try Self.jwt(claims))
        #expect(record.subject == "unnamed")
    }

    @Test(
        "garbage shaped like a JWT gives the unnamed account", arguments: ["a.b.c", "a.%%%.c", "a..c", "x.e30.y", "x.W10.y", "...", "a.b"])
    func garbage(token: String) async throws {
        #expect(try await Self.account(accessToken: token).0.subject == "unnamed")
    }

    @Test("a huge JWT, even from this issuer, is not decoded and gives the unnamed account")
    func hugeToken() async throws {
        let huge = try Self.jwt(["iss": Self.issuer, "sub": "user-42", "pad": String(repeating: "p", count: 20_000)])
        #expect(huge.utf8.count > AccessTokenIdentity.longestDecodedToken)
        #expect(try await Self.account(accessToken: huge).0.subject == "unnamed")
    }

    @Test("with a userinfo endpoint the userinfo answer still names the account")
    func userinfoStillFirst() async throws {
        let provider = Provider.testing(
            name: "gh", issuer: Self.issuer,
            endpoints: OAuthClient.Endpoints(
                authorization: URL(string: Self.issuer + "/authorize"), token: URL(string: Self.issuer + "/token"),
                userinfo: URL(string: Self.issuer + "/user")),
            scopes: [], isOpenID: false)
        await #expect(throws: UserinfoError.self) {
            _ = try await Self.account(accessToken: try Self.jwt(["iss": Self.issuer, "sub": "user-42"]), provider: provider)
        }
    }

    @Test("signing in again, by name too, updates the one account; a refresh keeps it; sign-out revokes and deletes it")
    func accountLifecycle() async throws {
        let server = FakeAuthorizationServer()
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore, providers: [Self.provider])
        let (first, outcome) = try await service.signIn(provider: Self.provider, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(outcome == .added && first.subject == "unnamed")
        // `login mcp:unnamed`: the "another account came back" check must not fire.
        let (again, againOutcome) = try await service.signIn(
            provider: Self.provider, account: AccountSelector(provider: "mcp", account: "unnamed"),
            interaction: ScriptedPerson { _, _ in .cancel })
        #expect(againOutcome == .updated && again.createdAt == first.createdAt && again.accessToken != first.accessToken)
        let refreshed = try await service.refresh(AccountSelector(provider: "mcp"))
        #expect(refreshed.isSameAccount(as: first) && refreshed.accessToken != again.accessToken)
        #expect(try await keystore.records().count == 1)
        let (_, revocation) = try await service.signOut(AccountSelector(provider: "mcp"))
        #expect(try revocation.get() == .revoked("refresh_token"))
        #expect(try await keystore.records().isEmpty)
    }
}
