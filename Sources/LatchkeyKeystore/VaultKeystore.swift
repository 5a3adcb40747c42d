import CLatchkeySys
public import Foundation
import LatchkeyEssentials
public import LatchkeySupport
public import LatchkeyVault
import Synchronization

/// The default keystore: one encrypted file, no daemon, works on any machine.
///
/// Crash safety: a new vault is written to a temporary file in the same directory, fsynced,
/// renamed over the old one and the directory fsynced, so a crash at any instant leaves either
/// the old or the new file. Concurrency: `update` holds `flock` on `vault.lock` throughout.
public final class VaultKeystore: Keystore {
    public let path: String
    public let backendName: String
    private let passphrase: any PassphraseProvider
    private let kdf: VaultFormat.KDFParameters
    /// Where the unlocked key is kept between processes; `nil` keeps it in this process only.
    public let keyCache: VaultKeyCache?
    /// How long a passphrase unlock lasts in `keyCache`.
    private let unlockDuration: TimeInterval
    /// The derived key and the salt it belongs to: derived once per process (scrypt is slow on purpose).
    private let unlocked = Mutex<UnlockedKey?>(nil)
    /// config.toml and its directory mappings, copied for the launcher beside the token copies.
    private let directories: (identity: String, accounts: DirectoryAccounts)?
    /// The accounts whose tokens are never copied for the launcher (`confirm = true`).
    private let releasePolicy: ReleasePolicy?

    struct UnlockedKey {
        var salt: [UInt8]
        var parameters: VaultFormat.KDFParameters
        var key: VaultKey
    }

    /// A vault at `path`; with `cacheKey`, an unlock is remembered in the kernel keyring for
    /// `unlockDuration`, and `directories` (config.toml's mappings, with the identity of the file
    /// they were read from) are copied there for the launcher, with the tokens of every account
    /// but those `releasePolicy` asks a person about.
    public convenience init(
        path: String, passphrase: any PassphraseProvider, cacheKey: Bool = false, unlockDuration: TimeInterval = 900,
        directories: (identity: String, accounts: DirectoryAccounts)? = nil, releasePolicy: ReleasePolicy? = nil
    ) {
        self.init(
            path: path, passphrase: passphrase, kdf: .standard, keyCache: cacheKey ? VaultKeyCache(vaultPath: path) : nil,
            unlockDuration: unlockDuration, directories: directories, releasePolicy: releasePolicy)
    }

    /// The `secret-service` keystore: a vault file whose key is a random secret held by the desktop
    /// Secret Service. scrypt's cost buys nothing for a 256-bit random secret, so it runs at its minimum.
    public static func secretService(path: String) -> VaultKeystore {
        VaultKeystore(
            path: path, passphrase: SecretServiceKey(), kdf: VaultFormat.KDFParameters(log2N: 10, r: 8, p: 1), backendName: "secret-service"
        )
    }

    init(
        path: String, passphrase: any PassphraseProvider, kdf: VaultFormat.KDFParameters, keyCache: VaultKeyCache? = nil,
        unlockDuration: TimeInterval = 900, backendName: String = VaultFormat.keystoreName,
        directories: (identity: String, accounts: DirectoryAccounts)? = nil, releasePolicy: ReleasePolicy? = nil
    ) {
        self.directories = directories
        self.releasePolicy = releasePolicy
        self.path = path
        self.backendName = backendName
        self.passphrase = passphrase
        self.kdf = kdf
        self.keyCache = keyCache
        self.unlockDuration = unlockDuration
    }

    // MARK: - Locking

    public var location: String { path }

    public var freshness: RecordsFreshness { .whileFileUnchanged(path) }

    public var launcherWindow: LauncherWindow {
        keyCache == nil
            ? .none(reason: "only the vault keystore is unlocked with a passphrase; the Secret Service unlocks with your desktop session")
            : .cachedKey
    }

    /// Unlocks for `duration` (asking for the passphrase unless already unlocked); a missing vault is
    /// created empty. Returns when the unlock expires.
    public func unlock(for duration: TimeInterval) async throws -> Date {
        guard let keyCache else {
            guard case .none(let reason) = launcherWindow else { throw KeystoreError.locked("this vault has no key cache") }
            throw KeystoreError.noLauncherWindow(reason)
        }
        if let bytes = try readVaultFile() {
            _ = try decode(bytes)
        } else {
            try ensureDirectory()
            let lock = try await KeystoreError.file { () async throws(FileError) in try await FileLock.acquire(path: path + ".lock") }
            defer { lock.release() }
            if try readVaultFile() == nil { try write([], clients: []) }
        }
        guard let unlockedKey = unlocked.withLock({ $0 }) else { throw KeystoreError.locked("no key after unlocking") }
        let expiry = Date().addingTimeInterval(duration)
        try keyCache.store(
            VaultKeyCache.Entry(expiresAt: expiry, salt: unlockedKey.salt, parameters: unlockedKey.parameters, key: unlockedKey.key))
        // The launcher's copies, with the accounts it must leave to the agent, from the start.
        _ = try await records()
        return expiry
    }

    /// Forgets the key, here and in the kernel keyring; `true` when it was cached there.
    @discardableResult
    public func lock() -> Bool {
        unlocked.withLock { $0 = nil }
        tokenCopies?.drop()
        return keyCache?.drop() ?? false
    }

    private var directory: String { VaultFile.directory(of: path) }

    public func records() async throws(KeystoreError) -> [AccountRecord] {
        guard let bytes = try readVaultFile() else { return [] }
        let records = try decode(bytes)
        refreshTokenCopies(records, vaultFile: bytes)
        return records
    }

    public func prepareForWriting() async throws(KeystoreError) {
        if try readVaultFile() != nil {
            _ = try await records()
        } else {
            try checkDirectory()
            _ = try currentOrNewHeader()
        }
    }

    public func update<Result: Sendable>(
        isolation: isolated (any Actor)?,
        _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result {
        try ensureDirectory()
        let lock = try await KeystoreError.file { () async throws(FileError) in try await FileLock.acquire(path: path + ".lock") }
        defer { lock.release() }
        var stored = try readVaultFile()
        var records = try stored.map(decode) ?? []
        let before = records
        let result = try await body(&records)
        // The clients only when writing: most updates change nothing, and a write already pays
        // for an fsync of the file and its directory.
        if records != before || stored == nil && !records.isEmpty {
            stored = try write(records, clients: try stored.map(decodeClients) ?? [])
        }
        refreshTokenCopies(records, vaultFile: stored)
        return result
    }

    public func updateAccount<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)?, _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result {
        try await updatingOneRecord(identity, isolation: isolation, body)
    }

    public func registeredClients() async throws(KeystoreError) -> [RegisteredClient] {
        guard let bytes = try readVaultFile() else { return [] }
        return try decodeClients(bytes)
    }

    public func updateRegisteredClients<Result: Sendable>(
        isolation: isolated (any Actor)?,
        _ body: (inout [RegisteredClient]) async throws -> Result
    ) async throws -> Result {
        try ensureDirectory()
        let lock = try await KeystoreError.file { () async throws(FileError) in try await FileLock.acquire(path: path + ".lock") }
        defer { lock.release() }
        let stored = try readVaultFile()
        let (records, read) = try stored.map(decodeAll) ?? ([], [])
        var clients = read
        let result = try await body(&clients)
        if clients != read {
            let written = try write(records, clients: clients)
            refreshTokenCopies(records, vaultFile: written)
        }
        return result
    }

    public func keepAnswerForLauncher(_ text: [UInt8], key: (_ location: String) -> String, of record: AccountRecord, until: Date) {
        tokenCopies?.keepAnswer(text, key: key(path), of: record, releasePolicy: releasePolicy, usableUntil: until)
    }

    /// The fast path's copies, only for a vault whose unlock is cached (they expire with it).
    private var tokenCopies: TokenCopies? { keyCache.map { _ in TokenCopies(vaultPath: path) } }

    /// `vaultFile`: the bytes the records came from or went to (`nil` when there is no file).
    private func refreshTokenCopies(_ records: [AccountRecord], vaultFile: [UInt8]?) {
        guard let tokenCopies, let until = keyCache?.unlockedUntil else { return }
        tokenCopies.sync(records, releasePolicy: releasePolicy, directories: directories, unlockedUntil: until, vaultFile: vaultFile)
    }

    // MARK: - Reading

    /// The file's bytes, `nil` when there is no vault yet. Refuses what `VaultFile` refuses: a
    /// file others can read, a directory others could swap it in, and anything but a regular file
    /// of sane size (a FIFO would block, a huge sparse file would be allocated whole).
    private func readVaultFile() throws(KeystoreError) -> [UInt8]? {
        switch VaultFile.read(path) {
        case .success(let bytes): return bytes
        case .failure(let problem): throw error(for: problem)
        }
    }

    /// Checks what every read insists on, without opening or decrypting the vault (`latchkey
    /// doctor`); `false` when there is no vault file yet.
    public func checkPermissions() throws(KeystoreError) -> Bool {
        switch VaultFile.check(path) {
        case .success(let exists): return exists
        case .failure(let problem): throw error(for: problem)
        }
    }

    private func error(for problem: VaultFile.Problem) -> KeystoreError {
        KeystoreError(problem, path: path)
    }

    private func decode(_ bytes: [UInt8]) throws(KeystoreError) -> [AccountRecord] {
        try unseal(bytes, reading: VaultContents.decode)
    }

    private func decodeClients(_ bytes: [UInt8]) throws(KeystoreError) -> [RegisteredClient] {
        try unseal(bytes, reading: VaultContents.decodeClients)
    }

    /// Both, from one decryption: what an update writes back beside what it changed.
    private func decodeAll(_ bytes: [UInt8]) throws(KeystoreError) -> ([AccountRecord], [RegisteredClient]) {
        try unseal(bytes) { (try VaultContents.decode($0), try VaultContents.decodeClients($0)) }
    }

    /// What `read` makes of the vault's decrypted contents, which are wiped afterwards.
    private func unseal<Contents>(_ bytes: [UInt8], reading read: ([UInt8]) throws -> Contents) throws(KeystoreError) -> Contents {
        let parsed: (header: VaultFormat.Header, headerBytes: [UInt8], sealed: [UInt8])
        do {
            parsed = try VaultFormat.parse(bytes)
        } catch {
            switch error {
            case .notAVault: throw .damaged(path: path, reason: "it does not start with Latchkey's vault header")
            case .truncated: throw .damaged(path: path, reason: "it is truncated (\(bytes.count) bytes)")
            case .newerVersion(let version): throw .newerFormat(path: path, version: version)
            case .unsupported(let what): throw .damaged(path: path, reason: "unsupported \(what)")
            }
        }
        let key = try key(for: parsed.header)
        var plaintext: [UInt8]
        do {
            plaintext = try VaultFormat.open(sealed: parsed.sealed, headerBytes: parsed.headerBytes, key: key)
        } catch {
            throw .damaged(path: path, reason: "its contents fail authentication (a modified or corrupted byte)")
        }
        defer { plaintext.zeroize() }
        do {
            return try read(plaintext)
        } catch {
            throw .damaged(path: path, reason: "its decrypted contents are not the expected records")
        }
    }

    /// The key for `header`, derived from the passphrase unless already unlocked in this process.
    private func key(for header: VaultFormat.Header) throws(KeystoreError) -> VaultKey {
        if let cached = unlocked.withLock({ $0 }), cached.salt == header.salt, cached.parameters == header.kdf {
            return cached.key
        }
        if let cached = keyCache?.key(for: header) {
            unlocked.withLock { $0 = UnlockedKey(salt: header.salt, parameters: header.kdf, key: cached) }
            return cached
        }
        let secret = try passphrase.passphrase(forVault: path, creating: false)
        let key: VaultKey
        do {
            key = try VaultFormat.deriveKey(passphrase: secret, salt: header.salt, parameters: header.kdf)
        } catch {
            throw .io(path: path, reason: "key derivation failed: \(error)")
        }
        guard constantTimeEqual(VaultFormat.keyCheck(for: key), header.keyCheck) else { throw .wrongPassphrase(path: path) }
        remember(UnlockedKey(salt: header.salt, parameters: header.kdf, key: key))
        return key
    }

    // MARK: - Writing

    /// Returns the bytes now in the file.
    @discardableResult
    private func write(_ records: [AccountRecord], clients: [RegisteredClient]) throws(KeystoreError) -> [UInt8] {
        let header = try currentOrNewHeader()
        guard let key = unlocked.withLock({ $0?.key }) else { throw .locked("no key after unlocking") }
        var plaintext: [UInt8] = []
        defer { plaintext.zeroize() }
        let sealed: [UInt8]
        do {
            plaintext = try VaultContents.encode(records, clients: clients)
            sealed = VaultFormat.seal(plaintext, header: header, key: key)
        } catch {
            throw .io(path: path, reason: "cannot encrypt the records: \(error)")
        }
        // Never a vault every later read would refuse.
        guard sealed.count <= VaultFile.largestSize else {
            throw .io(
                path: path,
                reason:
                    "the records would take \(sealed.count) bytes, more than a vault may hold (\(VaultFile.largestSize >> 20) MiB); nothing was changed"
            )
        }
        try KeystoreError.file { () throws(FileError) in try AtomicFile.replace(path, with: sealed) }
        return sealed
    }

    /// The header of the unlocked key; a brand-new vault gets a fresh salt and asks for a passphrase.
    private func currentOrNewHeader() throws(KeystoreError) -> VaultFormat.Header {
        if let cached = unlocked.withLock({ $0 }) {
            return VaultFormat.Header(
                version: VaultFormat.currentVersion, kdf: cached.parameters, salt: cached.salt,
                keyCheck: VaultFormat.keyCheck(for: cached.key))
        }
        let secret = try passphrase.passphrase(forVault: path, creating: true)
        let salt = SecureRandom.bytes(16)
        let key: VaultKey
        do {
            key = try VaultFormat.deriveKey(passphrase: secret, salt: salt, parameters: kdf)
        } catch {
            throw .io(path: path, reason: "key derivation failed: \(error)")
        }
        remember(UnlockedKey(salt: salt, parameters: kdf, key: key))
        return VaultFormat.Header(version: VaultFormat.currentVersion, kdf: kdf, salt: salt, keyCheck: VaultFormat.keyCheck(for: key))
    }

    /// Keeps a key derived from the passphrase, in this process and (when enabled) in the kernel
    /// keyring, so the next process does not ask again. A keyring that refuses is not an error:
    /// the next process asks for the passphrase.
    private func remember(_ key: UnlockedKey) {
        unlocked.withLock { $0 = key }
        guard let keyCache, unlockDuration > 0 else { return }
        try? keyCache.store(
            VaultKeyCache.Entry(
                expiresAt: Date().addingTimeInterval(unlockDuration), salt: key.salt, parameters: key.parameters, key: key.key))
    }

    /// A directory another user can write to could have the vault replaced by one of theirs (a
    /// rename needs only the directory's write bit), so it is refused like a readable vault.
    private func checkDirectory() throws(KeystoreError) {
        if let problem = VaultFile.directoryProblem(directory) { throw error(for: problem) }
    }

    private func ensureDirectory() throws(KeystoreError) {
        try KeystoreError.file { () throws(FileError) in try AtomicFile.ensureDirectory(directory, of: path) }
    }
}

// MARK: - latchkey doctor

extension VaultKeystore {
    /// The backend, the vault file's and directory's permissions, and whether it is unlocked.
    public func findings(environment: [String: String]) -> [Finding] {
        let how = backendName == "vault" ? "the encrypted vault file" : "a vault file whose key the desktop Secret Service keeps"
        var findings = [Finding(.ok, "keystore", "\(backendName): \(how), \(path)")]
        do {
            let exists = try checkPermissions()
            let directory = (path as NSString).deletingLastPathComponent
            findings.append(
                Finding(
                    .ok, "vault permissions",
                    exists
                        ? "\(path) is private to you and \(directory) is not writable by others"
                        : "no vault yet; the first sign-in creates \(path) (mode 600, its directory 700)"))
        } catch {
            findings.append(Finding(.problem, "vault permissions", Self.found(in: error), fix: Self.fix(for: error)))
        }
        if let keyCache {
            if let until = keyCache.unlockedUntil {
                findings.append(
                    Finding(
                        .ok, "vault lock",
                        "unlocked until \(until.formatted(date: .omitted, time: .standard)) (its key is in the kernel keyring); `latchkey lock` locks it"
                    ))
            } else {
                let scripts =
                    environment["LATCHKEY_PASSPHRASE_FILE"] != nil
                    ? "LATCHKEY_PASSPHRASE_FILE is set" : "scripts need LATCHKEY_PASSPHRASE_FILE"
                findings.append(
                    Finding(
                        .ok, "vault lock",
                        "locked: commands ask for the passphrase (\(scripts)); `latchkey unlock` keeps it open for a while"))
            }
        }
        return findings
    }

    /// A keystore error split into what was found and the command that fixes it.
    static func found(in error: KeystoreError) -> String {
        switch error {
        case .unsafePermissions(let path, let mode):
            return "\(path) is accessible by other users (mode \(mode)), so the vault refuses to open it"
        case .unsafeDirectory(let path, let mode, nil):
            return "\(path) can be written by other users (mode \(mode)), who could replace the vault; the vault refuses it"
        case .unsafeDirectory(let path, _, let owner?):
            return "\(path) belongs to another user (uid \(owner)), who could replace the vault; the vault refuses it"
        case .notAVaultFile(let path, let reason):
            return "\(path) cannot be the vault: \(reason); every command refuses it"
        default:
            return error.description
        }
    }

    static func fix(for error: KeystoreError) -> String? {
        switch error {
        case .unsafePermissions(let path, _): return "chmod 600 \(path)"
        case .unsafeDirectory(let path, _, nil): return "chmod 700 \(path)"
        case .unsafeDirectory: return "set XDG_DATA_HOME to a directory of your own"
        case .notAVaultFile(let path, _): return "move it aside (mv \(path) \(path).not-a-vault)"
        default: return nil
        }
    }
}
