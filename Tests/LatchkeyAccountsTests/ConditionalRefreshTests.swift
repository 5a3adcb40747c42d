import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// `AccountService.refresh(_:if:)`: the agent's refresh for a token a server refused, judged on
/// the account as it is under the keystore's lock, so one refusal makes one refresh.
@Suite("A refresh that only happens if the account still holds a given token")
struct ConditionalRefreshTests {
    struct Refused: Error {}

    @Test("a condition that says no of the account as it is sends no token request and keeps its tokens")
    func declined() async throws {
        let server = FakeAuthorizationServer()
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore)
        let signedIn = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel }).0
        let kept = try await service.refresh(AccountSelector(provider: "corp")) { _ in false }
        #expect(kept.accessToken == signedIn.accessToken)
        #expect(server.transport.sent(to: "/token").count == 1)
    }

    @Test("a condition that sees the token it names refreshes once; named again, the new token is not that one")
    func refreshedOnce() async throws {
        let server = FakeAuthorizationServer()
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore)
        let refused = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel }).0.accessToken
        for _ in 0..<2 { _ = try await service.refresh(AccountSelector(provider: "corp")) { $0.accessToken == refused } }
        #expect(server.transport.sent(to: "/token").count == 2)
        #expect(try await service.validRecord(for: AccountSelector(provider: "corp"), minimumLifetime: 0).accessToken != refused)
    }

    @Test("an error from the condition ends the refresh with nothing sent")
    func conditionThrows() async throws {
        let server = FakeAuthorizationServer()
        let service = server.service(keystore: InMemoryKeystore())
        _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        await #expect(throws: Refused.self) { try await service.refresh(AccountSelector(provider: "corp")) { _ in throw Refused() } }
        #expect(server.transport.sent(to: "/token").count == 1)
    }
}
