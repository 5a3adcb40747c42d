import DemoOpenIDProvider
public import Foundation
import IdentityToolkitEmulator
public import LatchkeyBroker
import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeySupport
public import LatchkeyVault
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey demo`: two providers served in this process on loopback, their provider files, and
/// a throw-away vault, all in one private temporary directory that `close()` removes.
///
/// Nothing is read from or written to the person's own configuration: the environment handed
/// to the composition points every Latchkey path into the directory.
public final class DemoSession: Sendable {
    /// The demo person at both providers (shown on the demo screen: nothing here is a secret).
    public static let openIDUsername = "ada"
    public static let firebaseEmail = "ada@demo.test"
    public static let password = "lovelace-demo"
    /// The passphrase of a vault kept with `--vault`, so it can be opened afterwards.
    public static let keptVaultPassphrase = "lovelace-demo-vault"
    public static let openIDName = "demo-openid"
    public static let firebaseName = "demo-sms"

    /// The private directory (mode 0700) holding the provider files, the vault and its passphrase file.
    public let directory: String
    /// The vault inside `directory`, as every Latchkey command with `environment` finds it.
    public let vaultPath: String
    /// Where `close()` copies the vault to (`--vault`), if anywhere.
    public let keepVaultAt: String?
    /// What `latchkey` would see had the person exported the demo's paths: providers.d, XDG
    /// directories and the passphrase file all inside `directory`.
    public let environment: [String: String]
    public let sms: SMSInbox
    let openID: DemoOpenIDProvider
    let firebase: IdentityToolkitEmulator

    private init(
        directory: String, vaultPath: String, environment: [String: String], sms: SMSInbox, openID: DemoOpenIDProvider,
        firebase: IdentityToolkitEmulator, keepVaultAt: String?
    ) {
        self.directory = directory
        self.vaultPath = vaultPath
        self.environment = environment
        self.sms = sms
        self.openID = openID
        self.firebase = firebase
        self.keepVaultAt = keepVaultAt
    }

    /// Starts both providers and writes their files. With `keepVaultAt`, `close()` copies the
    /// vault there (it must not exist yet) instead of removing it. `guardDirectory` is called with
    /// the private directory as soon as it exists, before anything is written into it: the command
    /// line starts there what removes it however the process ends.
    public static func start(
        environment base: [String: String], keepVaultAt: String? = nil, guardDirectory: (String) -> Void = { _ in }
    ) async throws(DemoError) -> DemoSession {
        if let keepVaultAt, FileManager.default.fileExists(atPath: keepVaultAt) {
            throw .cannotStart("\(keepVaultAt) exists already; --vault needs a path where no file is")
        }
        let directory = try makePrivateDirectory(in: base["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp")
        guardDirectory(directory)
        // Kept outside the `do` so a failure after one provider started stops it again.
        var startedOpenID: DemoOpenIDProvider?
        var startedFirebase: IdentityToolkitEmulator?
        do {
            let sms = SMSInbox()
            let redirectPath = "/oauth2redirect/\(openIDName)"
            let openID = try await DemoOpenIDProvider.start(configuration: DemoOpenIDConfiguration(redirectPaths: [redirectPath]))
            startedOpenID = openID
            let firebase = try await IdentityToolkitEmulator.start(
                configuration: firebaseConfiguration, log: { line in sms.receive(line) })
            startedFirebase = firebase
            let providers = directory + "/providers.d"
            try FileManager.default.createDirectory(atPath: providers, withIntermediateDirectories: false)
            try write(openIDProviderFile(issuer: openID.issuer, redirectPath: redirectPath), to: "\(providers)/\(openIDName).toml")
            try write(firebaseProviderFile(emulator: firebase), to: "\(providers)/\(firebaseName).toml")
            let passphrase =
                keepVaultAt == nil
                ? Array(0..<24).map { _ in "abcdefghijkmnpqrstuvwxyz23456789".randomElement()! }.map(String.init).joined()
                : keptVaultPassphrase
            try write(passphrase + "\n", to: directory + "/passphrase")
            try FileManager.default.createDirectory(atPath: directory + "/config/latchkey", withIntermediateDirectories: true)
            try write("keystore = \"vault\"\nunlock_timeout = 0\n", to: directory + "/config/latchkey/config.toml")
            var environment = base
            for name in [
                "LATCHKEY_PASSPHRASE_FILE", "LATCHKEY_PROVIDERS_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                "XDG_CACHE_HOME",
            ] {
                environment[name] = nil
            }
            environment["LATCHKEY_PROVIDERS_DIR"] = providers
            environment["LATCHKEY_PASSPHRASE_FILE"] = directory + "/passphrase"
            environment["XDG_CONFIG_HOME"] = directory + "/config"
            environment["XDG_DATA_HOME"] = directory + "/data"
            environment["XDG_STATE_HOME"] = directory + "/state"
            environment["XDG_CACHE_HOME"] = directory + "/cache"
            return DemoSession(
                directory: directory, vaultPath: LatchkeyPaths(environment: environment).vaultFile, environment: environment, sms: sms,
                openID: openID, firebase: firebase, keepVaultAt: keepVaultAt)
        } catch {
            await startedOpenID?.shutdown()
            await startedFirebase?.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
            throw .cannotStart("\(error)")
        }
    }

    /// The composition every demo command runs with: the demo's providers and vault. The demo's
    /// config.toml sets `unlock_timeout = 0`, so no key or token copy goes to the kernel keyring,
    /// where it would outlive the demo.
    public func composition() -> Composition {
        Composition(environment: environment, passphrase: PassphraseFile(path: environment["LATCHKEY_PASSPHRASE_FILE"]!))
    }

    /// Where scripts driving `demo --no-tui` read the SMS sent: the inbox, one message per line,
    /// newest last, in a file only this user can read (an HTTP listing would answer any local
    /// process, and any web page through DNS rebinding). Written once `keepsSMSFile()` is called.
    public var smsFile: String { directory + "/sms.txt" }

    /// Keeps `smsFile` up to date from now on: the screen is the inbox's other reader.
    public func keepsSMSFile() {
        sms.onChange { [smsFile] messages in try? Self.write(messages.map { $0 + "\n" }.joined(), to: smsFile) }
    }

    /// Lines for the demo panel: who to sign in as at each provider, what the demo's phone
    /// app (the enrolled TOTP factor) shows at `date`, and the keys to try once signed in.
    /// The code has a line of its own, so at 80 columns it stays beside what it is.
    public func notes(at date: Date = Date()) -> [String] {
        [
            "Demo OpenID: user \(Self.openIDUsername), password \(Self.password) (a: the demo browser signs in)",
            "Demo Firebase (SMS): \(Self.firebaseEmail), password \(Self.password)",
            "Its authenticator: Phone app shows \(TOTP.code(secret: Self.totpSecret, at: date) ?? "?")",
            "Then: n another account, ⏎ on one signs it in again, m uses it in this directory, + a provider",
        ]
    }

    /// What became of the vault `--vault PATH` asked to keep.
    public enum KeptVault: Sendable, Equatable {
        case kept(at: String)
        /// PATH could not be made a new file (something appeared there while the demo ran, or its
        /// directory refuses it): nothing there was replaced.
        case notKept(String)
    }

    /// Stops both providers and removes the directory; a vault to keep is copied out first into a
    /// file created for it, never over one that appeared at that path since the start.
    public func close() async -> KeptVault? {
        await openID.shutdown()
        await firebase.shutdown()
        var kept: KeptVault?
        if let keepVaultAt, let bytes = FileManager.default.contents(atPath: vaultPath) {
            kept = Self.createExclusively(keepVaultAt, bytes: Array(bytes))
        }
        try? FileManager.default.removeItem(atPath: directory)
        return kept
    }

    /// Writes `bytes` to a new file at `path` (O_EXCL, no symlink followed, mode 0600), durably.
    static func createExclusively(_ path: String, bytes: [UInt8]) -> KeptVault {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            return .notKept("\(path) cannot be created (\(String(cString: strerror(errno)))); nothing there was replaced")
        }
        defer { Glibc.close(descriptor) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                unlink(path)
                return .notKept("\(path) could not be written (\(String(cString: strerror(errno))))")
            }
            written += count
        }
        guard fsync(descriptor) == 0 else {
            unlink(path)
            return .notKept("\(path) could not be written (\(String(cString: strerror(errno))))")
        }
        return .kept(at: path)
    }

    // MARK: - Files

    static var firebaseConfiguration: EmulatorConfiguration {
        EmulatorConfiguration(
            projectID: "latchkey-demo", tokenLifetime: 600,
            users: [
                EmulatorUser(
                    localId: "ada-firebase", email: firebaseEmail, password: password, displayName: "Ada Lovelace",
                    mfaInfo: [
                        .init(mfaEnrollmentId: "work-phone", displayName: "Work phone", phoneInfo: "+15555551234"),
                        .init(mfaEnrollmentId: "personal-phone", displayName: "Personal", phoneInfo: "+447700900815"),
                        .init(mfaEnrollmentId: "authenticator", displayName: "Phone app", totpSecret: totpSecret),
                    ])
            ])
    }

    /// The TOTP secret (RFC 6238, base32) of the demo's phone app.
    static let totpSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    static func openIDProviderFile(issuer: String, redirectPath: String) -> String {
        """
        # latchkey demo: an OpenID provider served by this latchkey process (gone when it exits).
        display_name = "Demo OpenID"
        kind = "oidc"
        issuer = "\(issuer)"
        client_id = "latchkey-demo"
        scopes = ["openid", "profile", "email"]
        redirect_path = "\(redirectPath)"

        """
    }

    static func firebaseProviderFile(emulator: IdentityToolkitEmulator) -> String {
        """
        # latchkey demo: the Identity Toolkit emulator served by this latchkey process.
        display_name = "Demo Firebase (SMS)"
        kind = "firebase"
        api_key = "demo-api-key"
        project_id = "latchkey-demo"
        identitytoolkit_url = "\(emulator.identityToolkitURL.absoluteString)"
        securetoken_url = "\(emulator.secureTokenURL.absoluteString)"
        jwks_uri = "\(emulator.jwksURL.absoluteString)"

        """
    }

    static func write(_ text: String, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw DemoError.cannotStart("cannot write \(path)")
        }
    }

    /// Whether `path` is a directory `makePrivateDirectory` could have made: named
    /// `latchkey-demo.*`, this user's, open to nobody else, not a symlink. Only such a directory
    /// is removed by the watchdog, whatever path it is handed.
    public static func isPrivateDirectory(_ path: String) -> Bool {
        (path as NSString).lastPathComponent.hasPrefix("latchkey-demo.")
            && TrustedDirectory.problem(path, .privateToYou, followingLinks: false) == nil
    }

    static func makePrivateDirectory(in parent: String) throws(DemoError) -> String {
        var template = Array("\(parent)/latchkey-demo.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .cannotStart("cannot make a private directory in \(parent) (\(String(cString: strerror(errno))))")
        }
        return String(cString: made)
    }
}

/// Why the demo could not run.
public enum DemoError: LatchkeyError {
    case cannotStart(String)

    public var category: FailureCategory { .unavailable }

    public var description: String {
        switch self {
        case .cannotStart(let reason): return "the demo could not start: \(reason)"
        }
    }
}
