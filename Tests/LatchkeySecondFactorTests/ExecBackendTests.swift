import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// The exec backend end to end with `examples/mfa-plugin/latchkey-mfa-demo`. Serialized: the
/// plugin finds its state directory through the process environment.
@Suite("The exec plugin backend with the example plugin", .serialized)
struct ExecBackendTests {
    static let plugin = FixtureFolder.repositoryRoot.appendingPathComponent("examples/mfa-plugin/latchkey-mfa-demo").path
    static let directory: String = {
        let path = NSTemporaryDirectory() + "latchkey-mfa-demo-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        setenv("LATCHKEY_MFA_DEMO_DIR", path, 1)
        return path
    }()

    static func harness() async throws -> EmulatorHarness {
        _ = directory
        var harness = try await EmulatorHarness.start()
        let provider = Provider.firebaseTesting(
            name: "demo", settings: FirebaseSettings(apiKey: "", projectID: "", mfaBackend: .exec(path: plugin)))
        harness = EmulatorHarness(
            emulator: harness.emulator, provider: provider,
            service: AccountService(
                catalog: ProviderCatalog(providers: [provider], errors: []), keystore: harness.keystore,
                engine: OAuthEngine(transport: LiveHTTPTransport()), browser: FakeBrowser(unavailable: true)),
            keystore: harness.keystore, directory: harness.directory)
        return harness
    }

    /// The code the plugin "sent" for `session`, read from its outbox.
    static func code(for session: VerificationSession) -> Secret? {
        let outbox = (try? String(contentsOfFile: directory + "/outbox", encoding: .utf8)) ?? ""
        let line = outbox.split(separator: "\n").last { $0.hasSuffix(" " + (session.sessionInfo?.exposedValue ?? "-")) }
        return line.map { Secret(String($0.split(separator: " ")[1])) }
    }

    @Test("a sign-in through the plugin masks its full numbers, retries a wrong code and stores the reported account")
    func signIn() async throws {
        let harness = try await Self.harness()
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("bob"), choose: { $0.last }) { session, attempt in
            attempt == 1 ? .code(Secret("not-a-code")) : Self.code(for: session).map(CodeAnswer.code) ?? .cancel
        }
        let (record, _) = try await harness.service.signIn(provider: harness.provider, interaction: person)
        #expect(person.log.hintsShown.first?.map(\.phoneNumber) == ["+*******0100", "+********0123"])
        #expect(person.log.problems == [nil, .wrongCode])
        #expect(record.issuer == "urn:latchkey:mfa-demo")
        #expect(record.subject == "demo-bob")
        #expect(record.secondFactor == "phone")

        let refreshed = try await harness.service.refreshFirebaseAccount(record, provider: harness.provider.asFirebase)
        #expect(refreshed.subject == "demo-bob")
        #expect(refreshed.refreshToken != record.refreshToken)
        #expect(refreshed.secondFactor == "phone")
    }

    @Test("plugin errors arrive typed: wrong password, and a pending credential it no longer knows")
    func errors() async throws {
        let backend = ExecBackend(path: Self.plugin, provider: "demo")
        _ = Self.directory
        await #expect(throws: FirebaseAuthError.invalidCredentials(code: "invalid_credentials")) {
            try await backend.signIn(.password(email: "bob@example.com", password: Secret("nope")))
        }
        let hint = SecondFactorHint(id: "work", kind: .phone, displayName: nil, phoneNumber: nil)
        await #expect(throws: FirebaseAuthError.pendingCredentialInvalid(code: "restart")) {
            try await backend.startSignIn(hint: hint, pending: PendingCredential(Secret("forged")))
        }
    }

    @Test("a program that is missing or writable by others is refused before it runs")
    func unsafeProgram() async throws {
        let missing = ExecBackend(path: "/nonexistent/plugin", provider: "demo")
        await #expect(throws: FirebaseAuthError.plugin(path: "/nonexistent/plugin", reason: "does not exist")) {
            try await missing.refresh(Secret("x"))
        }
        let path = NSTemporaryDirectory() + "latchkey-unsafe-plugin-" + UUID().uuidString
        try Data("#!/bin/sh\necho '{}'\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path)
        do {
            _ = try await ExecBackend(path: path, provider: "demo").refresh(Secret("x"))
            Issue.record("a world-writable plugin was run")
        } catch {
            #expect(error.description.contains("writable by other users"))
        }
    }
}
