import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyTUI
@testable import LatchkeyVault

@Suite("The screen's effects against the core, without a network")
struct EffectRunnerTests {
    /// A service whose one provider has no revocation endpoint, with one signed-in account.
    static func service(revocation: Bool) async throws -> (AccountService, InMemoryKeystore) {
        let server = FakeAuthorizationServer()
        var provider = server.provider
        if !revocation, case .oidc(var client) = provider.kind {
            client.endpoints.revocation = nil
            provider.kind = .oidc(client)
        }
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore, providers: [provider])
        _ = try await service.signIn(provider: provider, interaction: ScriptedPerson { _, _ in .cancel })
        return (service, keystore)
    }

    func signOutNote(revocation: Bool) async throws -> String {
        let (service, keystore) = try await Self.service(revocation: revocation)
        let inbox = Inbox()
        let runner = EffectRunner(
            inbox: inbox, service: service, typedPassphrase: nil, vaultPath: "/nonexistent/vault",
            driver: RecordingTerminal(size: TerminalSize(rows: 24, columns: 80)))
        runner.perform(.signOut(AccountSelector(provider: "corp")))
        for _ in 0..<500 {
            for event in inbox.drain() {
                if case .signedOut(_, let note) = event {
                    #expect(try await keystore.records().isEmpty)
                    return note
                }
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw CancellationError()
    }

    @Test("signing out at a provider without revocation says the tokens stay valid there, not that they were revoked")
    func signOutWithoutRevocation() async throws {
        let note = try await signOutNote(revocation: false)
        #expect(!note.contains("revoked"))
        #expect(note.contains("no revocation") && note.contains("stay valid there until they expire"))
    }

    @Test("signing out at a provider with revocation says the tokens were revoked")
    func signOutWithRevocation() async throws {
        #expect(try await signOutNote(revocation: true) == "Its tokens were revoked at the provider.")
    }
}
