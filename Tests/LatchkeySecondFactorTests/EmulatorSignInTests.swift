import Foundation
import IdentityToolkitEmulator
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("Second-factor sign-in against the Identity Toolkit emulator on loopback")
struct EmulatorSignInTests {
    /// A person who types whatever code the emulator sent.
    static func honest(_ harness: EmulatorHarness) -> @Sendable (VerificationSession, Int) async -> CodeAnswer {
        { session, _ in harness.code(for: session).map(CodeAnswer.code) ?? .cancel }
    }

    @Test("a password account without a second factor is stored with the securetoken issuer and no second factor")
    func withoutMFA() async throws {
        let harness = try await EmulatorHarness.start()
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("alice"), answer: { _, _ in .cancel })
        let (record, outcome) = try await harness.service.signIn(provider: harness.provider, interaction: person)
        #expect(outcome == .added)
        #expect(record.issuer == "https://securetoken.google.com/demo-latchkey")
        #expect(record.subject == "alice-uid")
        #expect(record.displayName == "alice@example.com")
        #expect(record.secondFactor == nil)
        #expect(person.log.hintsShown.isEmpty)
        let expiresIn = try #require(record.expiresAt).timeIntervalSinceNow
        #expect(expiresIn > 3500 && expiresIn <= 3600)
        let stored = try await harness.keystore.records()
        #expect(stored.map(\.subject) == ["alice-uid"])
        #expect(stored.first?.idToken == record.idToken)
    }

    @Test("each enrolled factor can be chosen; the account records which kind was used", arguments: ["bob-work", "bob-home", "bob-totp"])
    func chooseEachFactor(enrollment: String) async throws {
        let harness = try await EmulatorHarness.start()
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("bob"), choose: { $0.first { $0.id == enrollment } }, answer: Self.honest(harness))
        let (record, _) = try await harness.service.signIn(provider: harness.provider, interaction: person)
        let hints = try #require(person.log.hintsShown.first)
        #expect(hints.map(\.phoneNumber) == ["+*******0100", "+********0123", nil])
        #expect(hints.map(\.kind) == [.phone, .phone, .totp])
        #expect(record.secondFactor == (enrollment == "bob-totp" ? "totp" : "phone"))
        #expect(record.subject == "bob-uid")
        let stored = try await harness.keystore.records()
        #expect(stored.map(\.secondFactor) == [record.secondFactor])
        #expect(stored.first?.refreshToken != nil)
    }

    @Test("a wrong code is refused and the right one then accepted on the same session")
    func wrongThenRight() async throws {
        let harness = try await EmulatorHarness.start()
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("bob")) { session, attempt in
            guard attempt > 1, let code = harness.code(for: session) else {
                let real = harness.code(for: session)?.exposedValue
                return .code(Secret(real == "000000" ? "111111" : "000000"))
            }
            return .code(code)
        }
        let (record, _) = try await harness.service.signIn(provider: harness.provider, interaction: person)
        #expect(person.log.problems == [nil, .wrongCode])
        #expect(person.log.notices == [nil])
        #expect(record.secondFactor == "phone")
    }

    @Test("an expired code is answered by sending a new one, which then works")
    func expiredThenResent() async throws {
        let harness = try await EmulatorHarness.start { $0.codeLifetime = 60 }
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("bob")) { session, attempt in
            if attempt == 1 { harness.emulator.state.advanceClock(by: 61) }
            return harness.code(for: session).map(CodeAnswer.code) ?? .cancel
        }
        let (record, _) = try await harness.service.signIn(provider: harness.provider, interaction: person)
        #expect(person.log.notices == [nil, .codeExpired(code: "SESSION_EXPIRED")])
        #expect(record.secondFactor == "phone")
    }

    @Test("too many wrong codes end the sign-in with a wait")
    func tooManyAttempts() async throws {
        let harness = try await EmulatorHarness.start { $0.maxCodeAttempts = 2 }
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("bob")) { session, _ in
            .code(Secret(harness.code(for: session)?.exposedValue == "000000" ? "111111" : "000000"))
        }
        do {
            _ = try await harness.service.signIn(provider: harness.provider, interaction: person)
            Issue.record("the sign-in succeeded")
        } catch let error as FirebaseAuthError {
            #expect(error == .tooManyAttempts)
            #expect(error.recovery == .wait)
        }
        #expect(person.log.problems == [nil, .wrongCode, .wrongCode])
        #expect(try await harness.keystore.records().isEmpty)
    }

    @Test("an exhausted SMS quota ends a resend with QUOTA_EXCEEDED")
    func quota() async throws {
        let harness = try await EmulatorHarness.start { $0.smsQuota = 1 }
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("bob")) { _, _ in .resend }
        await #expect(throws: FirebaseAuthError.quotaExceeded) {
            try await harness.service.signIn(provider: harness.provider, interaction: person)
        }
    }

    @Test("a tampered or stale pending credential means starting over from the first factor")
    func tamperedPendingCredential() async throws {
        let harness = try await EmulatorHarness.start { $0.pendingCredentialLifetime = 120 }
        defer { Task { await harness.stop() } }
        let backend = harness.backend
        guard case .secondFactorRequired(let hints, let pending) = try await backend.signIn(.password("bob")) else {
            Issue.record("no second factor was asked for")
            return
        }
        // Flip one character of the payload (the last character of a base64url MAC may only
        // carry padding bits, so changing it would prove nothing).
        var characters = Array(pending.value.exposedValue)
        characters[10] = characters[10] == "A" ? "B" : "A"
        let tampered = String(characters)
        do {
            _ = try await backend.startSignIn(hint: hints[0], pending: PendingCredential(Secret(tampered)))
            Issue.record("a tampered credential was accepted")
        } catch {
            #expect(error == .pendingCredentialInvalid(code: "INVALID_MFA_PENDING_CREDENTIAL"))
            #expect(error.recovery == .restart)
        }
        harness.emulator.state.advanceClock(by: 121)
        await #expect(throws: FirebaseAuthError.pendingCredentialInvalid(code: "INVALID_MFA_PENDING_CREDENTIAL")) {
            try await backend.startSignIn(hint: hints[0], pending: pending)
        }
    }

    @Test("first-factor failures are typed: wrong password, disabled account")
    func firstFactorErrors() async throws {
        let harness = try await EmulatorHarness.start()
        defer { Task { await harness.stop() } }
        await #expect(throws: FirebaseAuthError.invalidCredentials(code: "INVALID_LOGIN_CREDENTIALS")) {
            try await harness.backend.signIn(.password(email: "bob@example.com", password: Secret("nope")))
        }
        await #expect(throws: FirebaseAuthError.userDisabled) { try await harness.backend.signIn(.password("eve")) }
    }

    @Test("a project enforcing app verification is reported with the server's error")
    func appVerification() async throws {
        let harness = try await EmulatorHarness.start { $0.requireAppVerification = true }
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("bob"), answer: Self.honest(harness))
        await #expect(throws: FirebaseAuthError.appVerificationRequired(code: "INVALID_APP_CREDENTIAL", message: "")) {
            try await harness.service.signIn(provider: harness.provider, interaction: person)
        }
    }

    @Test("a federated first factor (signInWithIdp with an ID token) leads to the same second factor")
    func federated() async throws {
        let harness = try await EmulatorHarness.start()
        defer { Task { await harness.stop() } }
        // The first factor is a whole browser sign-in at "corp", whose ID token the emulator
        // federates into bob's account (`signInWithIdp`, providerId oidc.corp).
        let corp = FakeAuthorizationServer(transport: RecordingTransport(fallback: LiveHTTPTransport()), clock: FixedClock(Date()))
        corp.signInAs("corp-bob")
        var settings = harness.provider.asFirebase.settings
        settings.firstFactor = .provider("corp")
        let firebase = Provider.firebaseTesting(name: "firebase", settings: settings)
        let service = AccountService(
            catalog: ProviderCatalog(providers: [firebase, corp.provider], errors: []), keystore: harness.keystore,
            engine: OAuthEngine(transport: corp.transport), browser: corp.browser, listeners: corp.listeners)
        let person = ScriptedPerson(answer: Self.honest(harness))
        let (record, _) = try await service.signIn(provider: firebase, interaction: person)
        #expect(record.subject == "bob-uid")
        #expect(record.secondFactor == "phone")
        #expect(person.log.federatedStarted == ["corp"] && person.log.federatedPassed == ["corp"])
        #expect(person.log.credentialsAsked == 0)
        let stored = try await harness.keystore.records()
        #expect(Set(stored.map(\.provider)) == ["corp", "firebase"])
    }

    @Test("a new phone is enrolled for a signed-in account and asked for at the next sign-in")
    func enrollment() async throws {
        let harness = try await EmulatorHarness.start()
        defer { Task { await harness.stop() } }
        let first = ScriptedPerson(credentials: .seeded("dave"), answer: { _, _ in .cancel })
        _ = try await harness.service.signIn(provider: harness.provider, interaction: first)
        let state = harness.emulator.state
        let enrolled = try await harness.service.enrollPhone(
            AccountSelector(provider: "firebase"), phoneNumber: "+15555550111", displayName: "Desk phone",
            interaction: ScriptedPerson { session, _ in
                #expect(session.hint.phoneNumber == "+*******0111")
                return state.verificationCodes().last.map { .code(Secret($0.code)) } ?? .cancel
            })
        #expect(enrolled.secondFactor == "phone")
        #expect(try await harness.keystore.records().first?.idToken == enrolled.idToken)
        let factors = try await harness.backend.enrolledFactors(idToken: try #require(enrolled.idToken))
        #expect(factors.map(\.phoneNumber) == ["+*******0111"])
        #expect(factors.map(\.displayName) == ["Desk phone"])

        let second = ScriptedPerson(credentials: .seeded("dave"), answer: Self.honest(harness))
        let (again, outcome) = try await harness.service.signIn(provider: harness.provider, interaction: second)
        #expect(outcome == .updated)
        #expect(again.secondFactor == "phone")
        #expect(second.log.hintsShown.first?.map(\.phoneNumber) == ["+*******0111"])
    }

    @Test("enrollment is refused while the email address is unverified")
    func unverifiedEmail() async throws {
        let harness = try await EmulatorHarness.start()
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("carol"), answer: { _, _ in .cancel })
        _ = try await harness.service.signIn(provider: harness.provider, interaction: person)
        do {
            _ = try await harness.service.enrollPhone(
                AccountSelector(provider: "firebase"), phoneNumber: "+15555550122", displayName: nil,
                interaction: ScriptedPerson { _, _ in .cancel })
            Issue.record("an unverified account enrolled a phone")
        } catch let error as FirebaseAuthError {
            #expect(error == .unverifiedEmail)
            #expect(error.recovery == .verifyEmail)
        }
        #expect(harness.emulator.state.verificationCodes().isEmpty)
    }

    @Test("refresh goes through securetoken, keeps the identity and the second factor, and renews the expiry")
    func refresh() async throws {
        let harness = try await EmulatorHarness.start()
        defer { Task { await harness.stop() } }
        let person = ScriptedPerson(credentials: .seeded("bob"), answer: Self.honest(harness))
        let (record, _) = try await harness.service.signIn(provider: harness.provider, interaction: person)
        harness.emulator.state.advanceClock(by: 30)
        let refreshed = try await harness.service.refreshFirebaseAccount(record, provider: harness.provider.asFirebase)
        #expect(refreshed.subject == record.subject)
        #expect(refreshed.secondFactor == "phone")
        #expect(refreshed.idToken != record.idToken)
        #expect(refreshed.accessToken == refreshed.idToken)
        #expect(try #require(refreshed.expiresAt) > (try #require(record.expiresAt)))
        await #expect(throws: FirebaseAuthError.sessionEnded(code: "INVALID_REFRESH_TOKEN")) {
            try await harness.backend.refresh(Secret("not-a-refresh-token"))
        }
    }

    @Test("an ID token signed by another key is rejected and nothing is stored")
    func foreignKeys() async throws {
        let harness = try await EmulatorHarness.start()
        let other = try await IdentityToolkitEmulator.start(configuration: EmulatorConfiguration(projectID: Seed.project))
        defer {
            Task {
                await harness.stop(); await other.shutdown()
            }
        }
        var settings = harness.provider.asFirebase.settings
        settings.jwksURL = other.jwksURL
        let provider = Provider.firebaseTesting(name: "firebase", settings: settings)
        let person = ScriptedPerson(credentials: .seeded("alice"), answer: { _, _ in .cancel })
        await #expect(throws: FirebaseAuthError.self) {
            try await harness.service.signIn(provider: provider, interaction: person)
        }
        #expect(try await harness.keystore.records().isEmpty)
    }
}
