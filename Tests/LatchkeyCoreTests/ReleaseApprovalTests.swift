import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyVault
@testable import LatchkeyAccounts
@testable import LatchkeyProviders
@testable import LatchkeyOAuth
@testable import LatchkeyKeystore
@testable import LatchkeyBroker
@testable import LatchkeySecondFactor

/// `confirm = true` on this machine without the agent: a command hands the token on only after
/// the person at its terminal agrees, and refuses with nobody to ask.
@Suite("A command asks before releasing a confirm = true account's token")
struct ReleaseApprovalTests {
    static let selector = AccountSelector(provider: "corp")
    static let account = "corp:alice@example.com"

    /// A service whose config.toml marks alice at corp `confirm = true`, waiting 7 s, with her signed in.
    static func service(confirming: Bool = true) async throws -> AccountService {
        let server = FakeAuthorizationServer()
        var configuration = LatchkeyConfiguration()
        configuration.accounts = [
            AccountSettings(selector: AccountSelector(parsing: account), sharing: AccountSharing(confirm: confirming))
        ]
        configuration.agent.confirmTimeout = 7
        let providers = LazyProviderCatalog { ProviderCatalog(providers: [server.provider], errors: []) }
        let service = AccountService(
            providers: providers, keystore: InMemoryKeystore(), engine: OAuthEngine(transport: server.transport, clock: server.clock),
            browser: server.browser, listeners: server.listeners, here: nil, hooks: nil,
            releasePolicy: ReleasePolicy(configuration: configuration, providers: providers))
        _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        return service
    }

    @Test("the person agrees: the token is handed on, and they were told who asked and for how long the question stands")
    func approved() async throws {
        let service = try await Self.service()
        let person = ScriptedPerson(answer: { _, _ in .cancel }, release: { _ in true })
        let record = try await service.validRecord(for: Self.selector, minimumLifetime: 60, signingInWith: person)
        #expect(record.subject == "alice")
        let asked = try #require(person.log.releasesAsked.first)
        #expect(asked.account == Self.account && asked.seconds == 7)
        #expect(asked.requester.hasPrefix("local: `") && asked.requester.contains("pid \(getppid())"))
    }

    @Test("a refusal, no answer in time, or nobody to ask: no token, and the error says which")
    func refused() async throws {
        let service = try await Self.service()
        let denying = ScriptedPerson(answer: { _, _ in .cancel }, release: { _ in false })
        await #expect(throws: ReleaseRefusal.denied(account: Self.account)) {
            try await service.validRecord(for: Self.selector, minimumLifetime: 60, signingInWith: denying)
        }
        let silent = ScriptedPerson(answer: { _, _ in .cancel })
        await #expect(throws: ReleaseRefusal.notApproved(account: Self.account, seconds: 7)) {
            try await service.validRecord(for: Self.selector, minimumLifetime: 60, signingInWith: silent)
        }
        await #expect(throws: ReleaseRefusal.nobodyToAsk(account: Self.account)) {
            try await service.validRecord(for: Self.selector, minimumLifetime: 60, signingInWith: nil)
        }
    }

    @Test("an account not marked confirm = true is handed on without a question; the plain validRecord never asks")
    func notAsked() async throws {
        let person = ScriptedPerson(answer: { _, _ in .cancel }, release: { _ in false })
        _ = try await Self.service(confirming: false).validRecord(for: Self.selector, minimumLifetime: 60, signingInWith: person)
        _ = try await Self.service().validRecord(for: Self.selector, minimumLifetime: 60)
        #expect(person.log.releasesAsked.isEmpty)
    }
}
