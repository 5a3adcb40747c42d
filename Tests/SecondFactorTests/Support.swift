import Foundation
import IdentityToolkitEmulator
import Synchronization
import Testing

@testable import LatchkeyCore

/// Files under `Tests/SecondFactorTests/Fixtures`.
enum Fixture {
    static func bytes(_ name: String) throws -> [UInt8] {
        let root = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return Array(try Data(contentsOf: root.appendingPathComponent(name)))
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}

/// A transport that answers from a queue and records what was sent.
final class RecordingTransport: HTTPTransport {
    private let state = Mutex<(answers: [HTTPResponse], sent: [HTTPRequest])>(([], []))

    init(_ answers: [HTTPResponse]) { state.withLock { $0.answers = answers } }

    var sent: [HTTPRequest] { state.withLock { $0.sent } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        state.withLock { state in
            state.sent.append(request)
            return state.answers.isEmpty ? HTTPResponse(status: 500, body: []) : state.answers.removeFirst()
        }
    }

    /// The JSON body of the `index`th request.
    func body(_ index: Int) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(sent[index].body ?? [])) as? [String: Any]) ?? [:]
    }
}

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
        let settings = Provider.Firebase(
            apiKey: "fake-api-key", projectID: Seed.project, identityToolkitURL: emulator.identityToolkitURL,
            secureTokenURL: emulator.secureTokenURL, jwksURL: emulator.jwksURL)
        let provider = Provider.firebase(name: "firebase", displayName: "Firebase", settings: settings, sourceFile: "/tmp/firebase.toml")
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
            engine: SignInEngine(transport: LiveHTTPTransport()))
        return EmulatorHarness(emulator: emulator, provider: provider, service: service, keystore: keystore, directory: directory)
    }

    var backend: FirebaseBackend { FirebaseBackend(settings: provider.firebase!, transport: LiveHTTPTransport()) }

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

/// A person following a script: a first factor, a hint choice, and answers to code prompts.
final class ScriptedPerson: SecondFactorInteraction {
    struct Log {
        var hintsShown: [[SecondFactorHint]] = []
        var problems: [SecondFactorError?] = []
        var notices: [SecondFactorError?] = []
    }

    let factor: FirstFactor
    let choose: @Sendable ([SecondFactorHint]) -> SecondFactorHint?
    let answer: @Sendable (VerificationSession, Int) async -> CodeAnswer
    private let state = Mutex(Log())

    var log: Log { state.withLock { $0 } }

    init(
        _ factor: FirstFactor, choose: @escaping @Sendable ([SecondFactorHint]) -> SecondFactorHint? = { $0.first },
        answer: @escaping @Sendable (VerificationSession, Int) async -> CodeAnswer
    ) {
        self.factor = factor
        self.choose = choose
        self.answer = answer
    }

    func firstFactor(for provider: Provider) async throws -> FirstFactor { factor }

    func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint? {
        state.withLock { $0.hintsShown.append(hints) }
        return choose(hints)
    }

    func verificationStarted(_ session: VerificationSession, notice: SecondFactorError?) async {
        state.withLock { $0.notices.append(notice) }
    }

    func enterCode(for session: VerificationSession, problem: SecondFactorError?) async -> CodeAnswer {
        let attempt = state.withLock { log in
            log.problems.append(problem)
            return log.problems.count
        }
        return await answer(session, attempt)
    }
}

extension FirstFactor {
    static func password(_ user: String) -> FirstFactor {
        .password(email: "\(user)@example.com", password: Secret("\(user)-password"))
    }
}
