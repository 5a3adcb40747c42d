import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("Server-given lifetimes and stored dates never break arithmetic")
struct LifetimeClampTests {
    @Test(
        "whole seconds of any duration are clamped, never trapped",
        arguments: [
            (1e300, Int.max), (-1e300, -Int.max), (Double.infinity, Int.max), (-Double.infinity, -Int.max), (Double.nan, 0),
            (59.9, 59), (-0.5, -1), (9.3e18, Int.max),
        ])
    func wholeSeconds(value: Double, expected: Int) {
        #expect(Int(wholeSeconds: value) == expected)
        // The ceiling form the screen and the key cache use must not trap either.
        #expect(-Int(wholeSeconds: -value) >= Int(wholeSeconds: value))
    }

    @Test(
        "every lifetime from the wire is read one way: whole, non-negative, digits as text too, at most ten years",
        arguments: [
            ("3600", 3600), ("\"3600\"", 3600), ("0", 0), ("1e300", WireLifetime.longest),
            ("\"99999999999999999999999\"", WireLifetime.longest),
            ("59.5", nil), ("-1", nil), ("\"-1\"", nil), ("\"12s\"", nil), ("\"\"", nil), ("true", nil), ("\"٣\"", nil), ("null", nil),
        ] as [(String, Int?)])
    func oneLifetimeReading(json: String, expected: Int?) throws {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        #expect(WireLifetime(value)?.seconds == expected)
        // The token endpoint refuses what is no lifetime; the device endpoint and a plugin take it as absent.
        let token = HTTPResponse(status: 200, body: Array(#"{"access_token":"a","token_type":"Bearer","expires_in":\#(json)}"#.utf8))
        let parsed = Result { try TokenResponse.parse(token, endpoint: "token endpoint") }
        #expect((try? parsed.get())?.expiresIn == expected)
        #expect((try? parsed.get()) != nil || (expected == nil && json != "null"))
        let device = HTTPResponse(
            status: 200,
            body: Array(#"{"device_code":"d","user_code":"U","verification_uri":"https://idp.example/d","expires_in":\#(json)}"#.utf8))
        #expect(try DeviceAuthorization.parse(device).expiresIn == max(1, min(expected ?? 600, 3600)))
    }

    @Test("an absurd expiry from a server is stored as at most ten years away")
    func boundedExpiry() throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        let record = AccountRecord(
            provider: "p", issuer: "i", subject: "s", displayName: nil, accessToken: Secret("a"), tokenType: "Bearer", refreshToken: nil,
            idToken: nil, expiresAt: nil, scopes: [], createdAt: now, updatedAt: now)
        let updated = try record.applying(
            TokenUpdate(
                accessToken: Secret("b"), tokenType: "Bearer", refreshToken: nil, idToken: nil,
                expiresAt: Date(timeIntervalSince1970: 1e300)), at: now)
        let expiresAt = try #require(updated.expiresAt)
        #expect(expiresAt <= now.addingTimeInterval(10 * 365 * 86_400))
        #expect(updated.isValid(at: now, margin: 60))
    }

    @Test("a negative lifetime from any source is stored as expired now, not as a date before the common era")
    func negativeLifetime() throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        for expiry in [now.addingTimeInterval(-3600), Date(timeIntervalSince1970: -1e300), Date(timeIntervalSinceReferenceDate: -1e18)] {
            #expect(AccountRecord.boundedExpiry(expiry, at: now) == now)
        }
        #expect(AccountRecord.boundedExpiry(now.addingTimeInterval(60), at: now) == now.addingTimeInterval(60))
        #expect(AccountRecord.boundedExpiry(nil, at: now) == nil)
    }

    @Test("a negative expiresIn from a firebase backend is stored as expired now (it was stored as it came)")
    func negativeFirebaseLifetime() async throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        let provider = FirebaseProvider.testing(
            name: "fb", settings: FirebaseSettings(apiKey: "", projectID: "", mfaBackend: .exec(path: "/usr/bin/true")))
        let service = AccountService(
            catalog: ProviderCatalog(providers: [], errors: []), keystore: InMemoryKeystore(),
            engine: OAuthEngine(transport: RecordingTransport(), clock: FixedClock(now)), browser: FakeBrowser())
        let tokens = SignInTokens(
            idToken: Secret("id"), refreshToken: nil, expiresIn: -(2100 * 365 * 86_400),
            reportedAccount: ReportedAccount(issuer: "https://plugin.example", subject: "uid", displayName: nil, secondFactor: nil))
        let record = try await service.firebaseAccount(from: tokens, provider: provider, factorUsed: nil, previous: nil)
        #expect(record.expiresAt == now)
    }

    @Test("new tokens that name another account are refused, whoever brought them (OpenID refresh, firebase, plugin)")
    func identityChangeRefused() {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        let record = AccountRecord(
            provider: "p", issuer: "i", subject: "s", displayName: nil, accessToken: Secret("a"), tokenType: "Bearer", refreshToken: nil,
            idToken: nil, expiresAt: nil, scopes: [], createdAt: now, updatedAt: now)
        func update(_ identity: TokenSubject?) -> TokenUpdate {
            TokenUpdate(accessToken: Secret("b"), tokenType: "Bearer", refreshToken: nil, idToken: nil, expiresAt: nil, identity: identity)
        }
        #expect(throws: RefreshError.identityChanged) { try record.applying(update(TokenSubject(issuer: "i", subject: "t")), at: now) }
        #expect(throws: RefreshError.identityChanged) { try record.applying(update(TokenSubject(issuer: "j", subject: "s")), at: now) }
        #expect(throws: Never.self) { try record.applying(update(TokenSubject(issuer: "i", subject: "s")), at: now) }
        #expect(throws: Never.self) { try record.applying(update(nil), at: now) }
    }
}
