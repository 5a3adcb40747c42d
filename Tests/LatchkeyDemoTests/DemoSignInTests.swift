import Foundation
import LatchkeyDemo
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyBroker
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// Opens authorization URLs with the demo browser, as a person would in a real one.
struct DemoBrowserLauncher: Browser {
    func open(_ url: URL) throws(BrowserLaunchError) {
        Task { try? await DemoBrowser.demoUser.signIn(at: url) }
    }
}

/// A demo session and a service whose browser is the demo browser; closed by `body`'s end.
func withDemo(_ body: (DemoSession, AccountService) async throws -> Void) async throws {
    let session = try await DemoSession.start(environment: ["TMPDIR": FileManager.default.temporaryDirectory.path])
    let composition = session.composition()
    let service = AccountService(
        catalog: composition.catalog, keystore: composition.keystore, engine: composition.service.engine, browser: DemoBrowserLauncher())
    do {
        try await body(session, service)
    } catch {
        _ = await session.close()
        throw error
    }
    _ = await session.close()
}

@Suite("latchkey demo, end to end in one process")
struct DemoSignInTests {
    @Test("the demo OpenID provider signs ada in through the real loopback listener, and refresh rotates")
    func openIDSignInAndRefresh() async throws {
        try await withDemo { session, service in
            #expect(service.catalog.errors.isEmpty)
            let provider = try service.catalog.provider(named: DemoSession.openIDName)
            let person = ScriptedPerson(answer: { _, _ in .cancel })
            let (record, outcome) = try await service.signIn(provider: provider, interaction: person, timeout: .seconds(30))
            #expect(outcome == .added)
            #expect(record.displayName == "ada@demo.test" || record.displayName == "Ada Lovelace" || record.displayName == "ada")
            #expect(record.subject == "ada-1815")
            let before = try #require(record.refreshToken)
            let refreshed = try await service.refresh(AccountSelector(provider: DemoSession.openIDName))
            let after = try #require(refreshed.refreshToken)
            #expect(before.exposedValue != after.exposedValue, "a refresh token works once: the provider rotates it")
            #expect(refreshed.accessToken.exposedValue != record.accessToken.exposedValue)
            // The vault is the demo's, inside its private directory.
            #expect(session.vaultPath.hasPrefix(session.directory + "/"))
            #expect(FileManager.default.fileExists(atPath: session.vaultPath))
        }
    }

    @Test("the demo browser approves a device code on the verification page, and polling finishes the sign-in")
    func openIDDeviceSignIn() async throws {
        try await withDemo { session, service in
            let provider = try service.catalog.provider(named: DemoSession.openIDName)
            let person = ScriptedPerson(
                answer: { _, _ in .cancel },
                deviceCodeShown: { authorization in
                    do {
                        let page = try #require(URL(string: authorization.verificationURI))
                        await #expect(throws: DemoBrowserError.self, "a code nobody was shown is refused") {
                            try await DemoBrowser.demoUser.approveDevice(at: page, userCode: "BBBB-BBBB")
                        }
                        try await DemoBrowser.demoUser.approveDevice(at: page, userCode: authorization.userCode)
                    } catch {
                        Issue.record(error)
                    }
                })
            let (record, outcome) = try await service.signIn(provider: provider, mode: .device, interaction: person, timeout: .seconds(30))
            #expect(outcome == .added)
            #expect(record.subject == "ada-1815")
            #expect(person.log.deviceCodes.count == 1)
        }
    }

    @Test("the demo firebase provider asks for the SMS code the inbox received")
    func firebaseSignInWithTheInboxCode() async throws {
        try await withDemo { session, service in
            let provider = try service.catalog.provider(named: DemoSession.firebaseName)
            let inbox = session.sms
            let person = ScriptedPerson(
                credentials: PasswordCredentials(email: DemoSession.firebaseEmail, password: Secret(DemoSession.password)),
                choose: { hints in hints.first { $0.displayName == "Personal" } },
                answer: { _, _ in
                    let code = inbox.all.last.flatMap { $0.firstMatch(of: #/use the code (\d{6})/#) }.map { String($0.1) }
                    return code.map { .code(Secret($0)) } ?? .cancel
                })
            let (record, _) = try await service.signIn(provider: provider, interaction: person, timeout: .seconds(30))
            #expect(record.secondFactor == "phone")
            #expect(person.log.hintsShown.first?.map(\.displayName) == ["Work phone", "Personal", "Phone app"])
            #expect(inbox.all.count == 1 && inbox.all[0].contains("+447700900815"))
        }
    }

    @Test("the demo's phone app shows the TOTP code the emulator accepts")
    func firebaseSignInWithThePhoneApp() async throws {
        try await withDemo { session, service in
            let provider = try service.catalog.provider(named: DemoSession.firebaseName)
            let person = ScriptedPerson(
                credentials: PasswordCredentials(email: DemoSession.firebaseEmail, password: Secret(DemoSession.password)),
                choose: { hints in hints.first { $0.kind == .totp } },
                answer: { _, _ in
                    let shown = session.notes().joined().firstMatch(of: #/Phone app shows (\d{6})/#).map { String($0.1) }
                    return shown.map { .code(Secret($0)) } ?? .cancel
                })
            let (record, _) = try await service.signIn(provider: provider, interaction: person, timeout: .seconds(30))
            #expect(record.secondFactor == "totp")
            #expect(session.sms.all.isEmpty, "no SMS for an authenticator app")
        }
    }

    @Test("closing the demo removes its directory, or moves the vault out when asked to keep it")
    func closeRemovesEverything() async throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("demo-close-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let kept = parent + "/kept.vault"
        let session = try await DemoSession.start(environment: ["TMPDIR": parent], keepVaultAt: kept)
        let attributes = try FileManager.default.attributesOfItem(atPath: session.directory)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let composition = session.composition()
        let service = AccountService(
            catalog: composition.catalog, keystore: composition.keystore, engine: composition.service.engine, browser: DemoBrowserLauncher()
        )
        let provider = try service.catalog.provider(named: DemoSession.openIDName)
        let (record, _) = try await service.signIn(
            provider: provider, interaction: ScriptedPerson(answer: { _, _ in .cancel }), timeout: .seconds(30))
        #expect(await session.close() == .kept(at: kept))
        let vault = try #require(FileManager.default.contents(atPath: kept))
        #expect(vault.range(of: Data(record.accessToken.exposedValue.utf8)) == nil, "the kept vault is encrypted")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent) == ["kept.vault"])
        await #expect(throws: DemoError.self) { try await DemoSession.start(environment: ["TMPDIR": parent], keepVaultAt: kept) }
    }
}
