import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyBroker
@testable import LatchkeyOAuth
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// `--acr` and `--max-age` (OIDC Core §3.1.2.1): asked for in the authorization request, checked
/// against the new ID token, and a stored account that does not satisfy them signed in again.
@Suite("Step-up")
struct StepUpTests {
    static let person = ScriptedPerson { _, _ in .cancel }
    static let selector = AccountSelector(provider: "corp")

    @Test("acr_values and max_age go with the authorization request, and a matching sign-in is stored")
    func asked() async throws {
        let server = FakeAuthorizationServer()
        server.authenticate(acr: "mfa", at: server.clock.now())
        let keystore = InMemoryKeystore()
        _ = try await server.service(keystore: keystore).signIn(
            provider: server.provider, interaction: Self.person, stepUp: StepUp(acrValues: ["mfa", "hwk"], maxAge: 300))
        let query = FakeAuthorizationServer.query(try #require(server.browser.urls.first))
        #expect(query["acr_values"] == "mfa hwk" && query["max_age"] == "300")
        #expect(try await keystore.records().count == 1)
    }

    @Test("a sign-in with a weaker acr, or without auth_time when max_age was asked, is refused and nothing is stored")
    func weakerRefused() async throws {
        let server = FakeAuthorizationServer()
        server.authenticate(acr: "pwd", at: nil)
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore)
        await #expect(throws: StepUpError.acr(asked: ["mfa"], got: "pwd", account: "alice@example.com", provider: "corp")) {
            try await service.signIn(provider: server.provider, interaction: Self.person, stepUp: StepUp(acrValues: ["mfa"]))
        }
        await #expect(throws: StepUpError.noAuthTime(account: "alice@example.com", provider: "corp")) {
            try await service.signIn(provider: server.provider, interaction: Self.person, stepUp: StepUp(maxAge: 60))
        }
        #expect(try await keystore.records().isEmpty)
    }

    @Test("a stored account with a weaker acr is signed in again with the step-up; without a person the error says why")
    func signsInAgain() async throws {
        let server = FakeAuthorizationServer()
        server.authenticate(acr: "pwd", at: server.clock.now())
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore)
        _ = try await service.signIn(provider: server.provider, interaction: Self.person)
        let stepUp = StepUp(acrValues: ["mfa"])
        await #expect(throws: StepUpError.acr(asked: ["mfa"], got: "pwd", account: "alice@example.com", provider: "corp")) {
            try await service.usableRecord(for: Self.selector, minimumLifetime: 60, signingInWith: nil, stepUp: stepUp)
        }
        server.authenticate(acr: "mfa", at: server.clock.now())
        let record = try await service.usableRecord(for: Self.selector, minimumLifetime: 60, signingInWith: Self.person, stepUp: stepUp)
        #expect(stepUp.problem(with: record, at: server.clock.now()) == nil)
        #expect(server.browser.urls.count == 2)
        #expect(FakeAuthorizationServer.query(server.browser.urls[1])["acr_values"] == "mfa")
        #expect(try await keystore.records().count == 1)
    }

    @Test("an account that authenticated within max-age is served as it is; one that did not is signed in again")
    func maxAge() async throws {
        let server = FakeAuthorizationServer()
        server.authenticate(acr: nil, at: server.clock.now())
        let service = server.service(keystore: InMemoryKeystore())
        _ = try await service.signIn(provider: server.provider, interaction: Self.person)
        server.clock.advance(by: 100)
        _ = try await service.usableRecord(for: Self.selector, minimumLifetime: 60, signingInWith: Self.person, stepUp: StepUp(maxAge: 300))
        #expect(server.browser.urls.count == 1)
        server.authenticate(acr: nil, at: server.clock.now())
        _ = try await service.usableRecord(for: Self.selector, minimumLifetime: 60, signingInWith: Self.person, stepUp: StepUp(maxAge: 30))
        #expect(server.browser.urls.count == 2)
        #expect(FakeAuthorizationServer.query(server.browser.urls[1])["max_age"] == "30")
    }
}
