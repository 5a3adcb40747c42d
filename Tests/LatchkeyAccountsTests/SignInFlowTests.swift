import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// The sign-in flow, exchange, refresh, key rotation and revocation driven end to end through
/// the seams: an in-memory authorization server, keystore and clock, no network.
@Suite("Sign-in flow and engine without a network")
struct SignInFlowTests {
    let server = FakeAuthorizationServer()
    let keystore = InMemoryKeystore()
    var service: AccountService { server.service(keystore: keystore) }

    func signIn() async throws -> AccountRecord {
        let (record, outcome) = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(outcome == .added)
        return record
    }

    @Test("a browser sign-in exchanges the code with the PKCE verifier and stores the verified identity")
    func exchange() async throws {
        let record = try await signIn()
        #expect(record.subject == "alice" && record.issuer == "https://corp.example")
        #expect(record.accessToken == Secret("access-1") && record.refreshToken == Secret("refresh-2"))
        #expect(record.expiresAt == server.clock.now().addingTimeInterval(3600))
        #expect(try await keystore.records() == [record])
        let exchange = try #require(server.transport.sent(to: "/token").first?.form)
        #expect(exchange["grant_type"] == "authorization_code" && exchange["code_verifier"] != nil)
        #expect(server.browser.urls.count == 1)
    }

    @Test("an ID token whose at_hash names another access token is refused at sign-in and at refresh; a matching one passes")
    func accessTokenHash() async throws {
        server.accessTokenHash(.ofAnotherToken)
        await #expect(throws: IDTokenError.claim("at_hash", "does not match the access token issued with it")) { try await signIn() }
        #expect(try await keystore.records().isEmpty)
        server.accessTokenHash(.matching)
        _ = try await signIn()
        server.accessTokenHash(.ofAnotherToken)
        await #expect(throws: IDTokenError.self) { try await service.refresh(AccountSelector(provider: "corp")) }
    }

    @Test("the keystore is opened before the browser, so a locked vault fails before any sign-in work")
    func keystoreFirst() async throws {
        let locked = LockedKeystore()
        await #expect(throws: KeystoreError.self) {
            try await server.service(keystore: locked).signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        }
        #expect(server.browser.urls.isEmpty && server.transport.sent.isEmpty)
    }

    @Test("a redirect that answers another request's state is refused and nothing is stored")
    func forgedState() async throws {
        let browser = server.browser
        let forged = ScriptedListenerFactory(browser: browser) { url in
            RedirectRequest(target: "/oauth2redirect/corp?code=stolen&state=not-ours", host: "127.0.0.1:49321")
        }
        let service = AccountService(
            catalog: ProviderCatalog(providers: [server.provider], errors: []), keystore: keystore,
            engine: OAuthEngine(transport: server.transport, clock: server.clock), browser: browser, listeners: forged)
        await #expect(throws: AuthorizationResponseError.self) {
            try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        }
        #expect(try await keystore.records().isEmpty)
        #expect(server.transport.sent(to: "/token").isEmpty)
        #expect(forged.answers == [.refused])
    }

    @Test("with no browser the person is told where to go, and the sign-in still completes")
    func noBrowser() async throws {
        let browser = FakeBrowser(unavailable: true)
        let listeners = ScriptedListenerFactory(browser: browser) { _ in nil }
        let person = ScriptedPerson { _, _ in .cancel }
        let service = AccountService(
            catalog: ProviderCatalog(providers: [server.provider], errors: []), keystore: keystore,
            engine: OAuthEngine(transport: server.transport, clock: server.clock), browser: browser, listeners: listeners)
        await #expect(throws: SignInError.timedOut(provider: "corp", seconds: 300)) {
            try await service.signIn(provider: server.provider, interaction: person)
        }
        #expect(person.log.browserProblems.count == 1)
        #expect(person.log.authorizationURLs.count == 1)
    }

    @Test("paste mode validates the pasted URL exactly like a loopback request")
    func paste() async throws {
        let server = FakeAuthorizationServer(clock: FixedClock(deadlinesWait: true))
        let service = server.service(keystore: keystore)
        let person = ScriptedPerson(answer: { _, _ in .cancel }) { [server] url in
            guard let request = server.approve(url) else { return nil }
            return "http://\(request.host ?? "")\(request.target)"
        }
        let (record, _) = try await service.signIn(provider: server.provider, mode: .paste, interaction: person)
        #expect(record.subject == "alice")
        #expect(server.browser.urls.isEmpty)
    }

    @Test("a device sign-in whose token endpoint cannot be reached gives up when the user code expires")
    func deviceUnreachable() async throws {
        server.transport.route("/token") { request in .failure(.unreachable(host: "corp.example", reason: "connection refused")) }
        let person = ScriptedPerson { _, _ in .cancel }
        await #expect(
            throws: DeviceFlowError.unreachable(
                "cannot reach corp.example: connection refused; check the network and the provider's address")
        ) {
            try await service.signIn(provider: server.provider, mode: .device, interaction: person)
        }
        #expect(person.log.deviceCodes == ["WDJB-MJHT"])
        #expect((10...12).contains(server.transport.sent(to: "/token").count))
    }

    @Test("paste mode gives up after the timeout when nothing is pasted")
    func pasteTimeout() async throws {
        let person = ScriptedPerson(answer: { _, _ in .cancel }) { _ in
            try? await Task.sleep(for: .seconds(3600))
            return nil
        }
        let started = ContinuousClock.now
        await #expect(throws: SignInError.pasteTimedOut(provider: "corp", seconds: 120)) {
            try await service.signIn(provider: server.provider, mode: .paste, interaction: person, timeout: .seconds(120))
        }
        // Far under the 120 s the fixed clock skipped, with room for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(try await keystore.records().isEmpty)
    }

    @Test("a refresh rotates the refresh token and keeps the account's identity and creation time")
    func refreshRotates() async throws {
        let first = try await signIn()
        server.clock.advance(by: 4000)
        let refreshed = try await service.refresh(AccountSelector(provider: "corp"))
        #expect(refreshed.refreshToken == Secret("refresh-3") && refreshed.accessToken == Secret("access-2"))
        #expect(refreshed.createdAt == first.createdAt && refreshed.updatedAt == server.clock.now())
        #expect(refreshed.expiresAt == server.clock.now().addingTimeInterval(3600))
        #expect(try await keystore.records() == [refreshed])
    }

    @Test("a valid token is handed out without a refresh; an expiring one is refreshed first")
    func validToken() async throws {
        _ = try await signIn()
        let selector = AccountSelector(provider: "corp")
        #expect(try await service.validToken(for: selector, minimumLifetime: 60, idToken: false) == Secret("access-1"))
        server.clock.advance(by: 3590)
        #expect(try await service.validToken(for: selector, minimumLifetime: 60, idToken: false) == Secret("access-2"))
        #expect(server.transport.sent(to: "/token").count == 2)
    }

    @Test("a token whose whole lifetime is shorter than the minimum asked is used until half of it is gone")
    func shortLivedTokens() async throws {
        server.accessTokenLifetime(60)
        _ = try await signIn()
        let selector = AccountSelector(provider: "corp")
        #expect(try await service.validToken(for: selector, minimumLifetime: 60, idToken: false) == Secret("access-1"))
        server.clock.advance(by: 29)
        #expect(try await service.validToken(for: selector, minimumLifetime: 60, idToken: false) == Secret("access-1"))
        server.clock.advance(by: 2)
        #expect(try await service.validToken(for: selector, minimumLifetime: 60, idToken: false) == Secret("access-2"))
        #expect(try await service.validToken(for: selector, minimumLifetime: 60, idToken: false) == Secret("access-2"))
        #expect(server.transport.sent(to: "/token").count == 2)
    }

    @Test("a refreshed ID token naming another account is rejected and the stored account is kept")
    func identityChange() async throws {
        let first = try await signIn()
        server.signInAs("mallory")
        await #expect(throws: RefreshError.identityChanged) { try await service.refresh(AccountSelector(provider: "corp")) }
        let kept = try #require(try await keystore.records().first)
        #expect(kept.subject == "alice" && kept.accessToken == first.accessToken)
        #expect(kept.lastError != nil)
    }

    @Test("a refresh token the provider rejects says to sign in again and keeps the account")
    func rejectedRefreshToken() async throws {
        _ = try await signIn()
        server.transport.route("/token", status: 400, json: #"{"error":"invalid_grant"}"#)
        await #expect(throws: RefreshError.refreshTokenRejected(account: "alice@example.com", provider: "corp")) {
            try await service.refresh(AccountSelector(provider: "corp"))
        }
        #expect(try await keystore.records().count == 1)
    }

    @Test("after a key rotation the JWKS is fetched again once and the new key is accepted")
    func keyRotation() async throws {
        _ = try await signIn()
        #expect(server.transport.sent(to: "/jwks").count == 1)
        server.rotateKey()
        _ = try await service.refresh(AccountSelector(provider: "corp"))
        #expect(server.transport.sent(to: "/jwks").count == 3)
    }

    @Test("sign-out revokes the refresh token, then deletes the account")
    func signOut() async throws {
        _ = try await signIn()
        let (record, revocation) = try await service.signOut(AccountSelector(provider: "corp"))
        #expect(try revocation.get() == .revoked("refresh_token"))
        #expect(server.revokedTokens == [record.refreshToken?.exposedValue])
        #expect(try await keystore.records().isEmpty)
    }

    @Test("a revocation endpoint that answers 401 to a public client is asked again with the access token as Bearer")
    func revocationWithBearer() async throws {
        let record = try await signIn()
        server.transport.route("/revoke") { request in
            guard request.header("Authorization") == "Bearer \(record.accessToken.exposedValue)" else {
                return .success(HTTPResponse(status: 401, body: []))
            }
            return .success(HTTPResponse(status: 200, body: []))
        }
        let (_, revocation) = try await service.signOut(AccountSelector(provider: "corp"))
        #expect(try revocation.get() == .revoked("refresh_token"))
        let attempts = server.transport.sent(to: "/revoke")
        #expect(attempts.count == 2 && attempts[0].header("Authorization") == nil)
    }

    @Test("a re-sign-in of one account sends login_hint and refuses another account coming back, storing nothing")
    func reSignInOfOneAccount() async throws {
        let alice = try await signIn()
        server.signInAs("mallory")
        let selector = AccountSelector(provider: "corp", account: alice.label)
        await #expect(throws: SignInError.differentAccount(expected: alice.label, got: "mallory@example.com")) {
            try await service.signIn(provider: server.provider, account: selector, interaction: ScriptedPerson { _, _ in .cancel })
        }
        let query = URLComponents(url: try #require(server.browser.urls.last), resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.first { $0.name == "login_hint" }?.value == alice.label)
        #expect(try await keystore.records() == [alice])
        server.signInAs("alice")
        let (again, outcome) = try await service.signIn(
            provider: server.provider, account: selector, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(outcome == .updated && again.subject == "alice")
    }

    @Test("signing in again as the same person updates the account instead of adding one")
    func signInAgain() async throws {
        let first = try await signIn()
        let (again, outcome) = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(outcome == .updated && again.createdAt == first.createdAt)
        #expect(try await keystore.records().count == 1)
    }
}

/// A keystore that is locked and cannot be unlocked here.
struct LockedKeystore: TestKeystore {
    var backendName: String { "locked" }
    func records() async throws(KeystoreError) -> [AccountRecord] { throw .locked("a test vault") }
    func update<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result {
        throw KeystoreError.locked("a test vault")
    }
    func updateAccount<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)?, _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result {
        try await updatingOneRecord(identity, isolation: isolation, body)
    }
    func registeredClients() async throws(KeystoreError) -> [RegisteredClient] { throw .locked("a test vault") }
    func updateRegisteredClients<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [RegisteredClient]) async throws -> Result
    ) async throws -> Result {
        throw KeystoreError.locked("a test vault")
    }
}
