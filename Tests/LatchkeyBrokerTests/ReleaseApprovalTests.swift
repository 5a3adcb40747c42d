import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyBroker
@testable import LatchkeyBrokerWire
@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// `confirm = true` on this machine without the agent: a command hands the token on only after
/// the person at its terminal agrees, and refuses with nobody to ask.
@Suite("A command asks before releasing a confirm = true account's token")
struct ReleaseApprovalTests {
    static let selector = AccountSelector(provider: "corp")
    static let account = "corp:alice@example.com"

    /// The broker at a command's door over a service whose config.toml marks alice at corp
    /// `confirm = true`, waiting 7 s, with her signed in; `person` at the terminal.
    static func broker(confirming: Bool = true, person: ScriptedPerson?, log: ReleaseLogRecorder = ReleaseLogRecorder()) async throws
        -> LocalBroker
    {
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
        return LocalBroker.atCommand(service, configuration: configuration, person: person, log: log)
    }

    static let request = TokenRequest(selector: "corp")

    @Test("the person agrees: the token is handed on, and they were told who asked and for how long the question stands")
    func approved() async throws {
        let person = ScriptedPerson(answer: { _, _ in .cancel }, release: { _ in true })
        let log = ReleaseLogRecorder()
        let release = try await Self.broker(person: person, log: log).token(Self.request)
        #expect(release.subject == "alice" && release.accessToken != nil)
        #expect(log.logged.map(\.outcome) == [.released], "a release a person approved is logged")
        let asked = try #require(person.log.releasesAsked.first)
        #expect(asked.account == Self.account && asked.seconds == 7)
        #expect(asked.requester.hasPrefix("local: `") && asked.requester.contains("pid \(getppid())"))
    }

    @Test("a refusal, no answer in time, or nobody to ask: no token, and the error says which")
    func refused() async throws {
        let denying = ScriptedPerson(answer: { _, _ in .cancel }, release: { _ in false })
        await #expect(throws: ReleaseRefusal.denied(account: Self.account)) {
            try await Self.broker(person: denying).token(Self.request)
        }
        let silent = ScriptedPerson(answer: { _, _ in .cancel })
        await #expect(throws: ReleaseRefusal.notApproved(account: Self.account, seconds: 7)) {
            try await Self.broker(person: silent).token(Self.request)
        }
        await #expect(throws: ReleaseRefusal.nobodyToAsk(account: Self.account)) {
            try await Self.broker(person: nil).token(Self.request)
        }
    }

    @Test("an account not marked confirm = true is handed on without a question, and a command logs nothing of it")
    func notAsked() async throws {
        let person = ScriptedPerson(answer: { _, _ in .cancel }, release: { _ in false })
        let log = ReleaseLogRecorder()
        _ = try await Self.broker(confirming: false, person: person, log: log).token(Self.request)
        #expect(person.log.releasesAsked.isEmpty && log.logged.isEmpty)
    }
}
