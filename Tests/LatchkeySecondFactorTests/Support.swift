import Foundation
import IdentityToolkitEmulator
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// The seeded project every loopback test signs in to.
enum Seed {
    static let project = "demo-latchkey"
    static let totpSecret = "JBSWY3DPEHPK3PXP"

    static var users: [EmulatorUser] {
        [
            EmulatorUser(localId: "alice-uid", email: "alice@example.com", password: "alice-password", displayName: "Alice"),
            EmulatorUser(
                localId: "bob-uid", email: "bob@example.com", password: "bob-password",
                mfaInfo: [
                    .init(mfaEnrollmentId: "bob-work", displayName: "Work phone", phoneInfo: "+15555550100"),
                    .init(mfaEnrollmentId: "bob-home", displayName: "Home phone", phoneInfo: "+447700900123"),
                    .init(mfaEnrollmentId: "bob-totp", displayName: "Authenticator", totpSecret: totpSecret),
                ],
                federatedIdentities: [.init(providerId: "oidc.corp", rawId: "corp-bob")]),
            EmulatorUser(
                localId: "carol-uid", email: "carol@example.com", password: "carol-password", emailVerified: false),
            EmulatorUser(localId: "dave-uid", email: "dave@example.com", password: "dave-password"),
            EmulatorUser(localId: "eve-uid", email: "eve@example.com", password: "eve-password", disabled: true),
        ]
    }
}

/// An emulator on loopback, a firebase provider pointing at it and an account service whose
/// vault lives in a temporary directory (cheap KDF).
struct EmulatorHarness {
    let emulator: IdentityToolkitEmulator
    let provider: Provider
    let service: AccountService
    let keystore: VaultKeystore
    let directory: String

    static func start(_ change: (inout EmulatorConfiguration) -> Void = { _ in }) async throws -> EmulatorHarness {
        var configuration = EmulatorConfiguration(projectID: Seed.project, users: Seed.users)
        change(&configuration)
        let emulator = try await IdentityToolkitEmulator.start(configuration: configuration)
        let settings = FirebaseSettings(
            apiKey: "fake-api-key", projectID: Seed.project, identityToolkitURL: emulator.identityToolkitURL,
            secureTokenURL: emulator.secureTokenURL, jwksURL: emulator.jwksURL)
        let provider = Provider.firebaseTesting(name: "firebase", settings: settings)
        let directory = NSTemporaryDirectory() + "latchkey-mfa-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let passphraseFile = directory + "/passphrase"
        try Data("correct horse battery staple".utf8).write(to: URL(fileURLWithPath: passphraseFile))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphraseFile)
        let keystore = VaultKeystore(
            path: directory + "/vault", passphrase: PassphraseFile(path: passphraseFile),
            kdf: VaultFormat.KDFParameters(log2N: 10, r: 8, p: 1))
        let service = AccountService(
            catalog: ProviderCatalog(providers: [provider], errors: []), keystore: keystore,
            engine: OAuthEngine(transport: LiveHTTPTransport()), browser: FakeBrowser(unavailable: true))
        return EmulatorHarness(emulator: emulator, provider: provider, service: service, keystore: keystore, directory: directory)
    }

    var backend: FirebaseBackend { FirebaseBackend(settings: provider.asFirebase.settings, transport: LiveHTTPTransport()) }

    /// The code the emulator "sent" for `session`.
    func code(for session: VerificationSession) -> Secret? {
        guard let info = session.sessionInfo?.exposedValue else {
            return TOTP.code(secret: Seed.totpSecret, at: Date()).map(Secret.init)
        }
        return emulator.state.verificationCodes().first { $0.sessionInfo == info }.map { Secret($0.code) }
    }

    func stop() async {
        await emulator.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension FirstFactor {
    static func password(_ user: String) -> FirstFactor {
        .password(email: "\(user)@example.com", password: Secret("\(user)-password"))
    }
}
