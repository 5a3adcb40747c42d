public import Foundation
import LatchkeyEssentials
public import LatchkeySupport
public import LatchkeyVault

/// Where account records live. Every token Latchkey holds goes through one of these.
///
/// Changes happen inside `update` (any records) or `updateAccount` (one account), which hold an
/// exclusive lock across processes for the whole read-modify-write, so two `latchkey` processes
/// never lose each other's writes.
public protocol Keystore: Sendable {
    /// A short name for listings: `vault`, `secret-service` or `openbao`.
    var backendName: String { get }

    /// Where the records live, as a refusal names it to a client that may share them: the vault
    /// file's path, the OpenBao cluster's path.
    var location: String { get }

    /// How a reader that keeps the records in memory (the agent) tells they are still current.
    var freshness: RecordsFreshness { get }

    /// The window in which the launcher answers from copies of this keystore's tokens without
    /// asking it (`latchkey unlock --for`), if it has one.
    var launcherWindow: LauncherWindow { get }

    /// All records, read without taking the write lock.
    func records() async throws(KeystoreError) -> [AccountRecord]

    /// Runs `body` on the current records under the exclusive lock and stores what it leaves
    /// (only when it changed them). The body may do network work: a refresh keeps the lock until
    /// the rotated refresh token is written.
    func update<Result: Sendable>(
        isolation: isolated (any Actor)?,
        _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result

    /// The record kept for `identity`, or `nil`, read without the lock.
    func record(_ identity: AccountIdentity) async throws(KeystoreError) -> AccountRecord?

    /// `update` for one known account: runs `body` on its record (`nil` when none is kept) under
    /// a lock that must cover that account, and stores what it leaves (`nil` removes it). Every
    /// change that spends a refresh token goes through here, so a keystore many machines share
    /// can lock the account alone and let refreshes of different accounts run at once (OpenBao);
    /// the vault's lock covers the whole file either way (`updatingOneRecord`). The body must not
    /// change the record's identity.
    func updateAccount<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)?,
        _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result

    /// The clients Latchkey registered for itself (RFC 7591), one per provider.
    func registeredClients() async throws(KeystoreError) -> [RegisteredClient]

    /// `update` for the registered clients: the accounts stay as they are.
    func updateRegisteredClients<Result: Sendable>(
        isolation: isolated (any Actor)?,
        _ body: (inout [RegisteredClient]) async throws -> Result
    ) async throws -> Result

    /// Makes sure a later `update` can be written, before a sign-in asks the person for anything:
    /// an existing vault is unlocked; for a new one, the passphrase is obtained (its file's mode
    /// checked) and the key derived.
    func prepareForWriting() async throws(KeystoreError)

    /// Opens the launcher's window for `duration` (asking for what it needs first, such as the
    /// vault's passphrase) and makes the copies; returns when it closes. Throws
    /// `KeystoreError.noLauncherWindow` where there is none.
    func unlock(for duration: TimeInterval) async throws -> Date

    /// Closes the launcher's window and drops every copy; `true` when it was open.
    @discardableResult
    func lock() -> Bool

    /// What `latchkey doctor` says of this keystore: where it is, whether it can be used, and
    /// what to run where it cannot. Nothing is decrypted or asked for; a keystore on the network
    /// may ask it what it holds (OpenBao's leases).
    func findings(environment: [String: String]) async -> [Finding]

    /// Keeps `text`, the full command's whole answer about `record`, for the launcher to print
    /// until `until` under the key `key` names for the keystore's location, while the launcher's
    /// window is open and the account may be answered without a person (not `confirm = true`);
    /// anything else keeps nothing.
    func keepAnswerForLauncher(_ text: [UInt8], key: (_ location: String) -> String, of record: AccountRecord, until: Date)
}

/// How a reader that keeps a keystore's records in memory tells they are still current.
public enum RecordsFreshness: Sendable, Equatable {
    /// While the file at this path is the same file, unchanged (every write renames a new one
    /// over it): a vault, whose every change on this machine shows there at once.
    case whileFileUnchanged(String)
    /// For this many seconds after they were read: a keystore other machines change, with no
    /// file here to watch (OpenBao). A logout on another machine is seen within it.
    case forSeconds(TimeInterval)
}

/// The window in which the launcher answers from copies of a keystore's tokens.
public enum LauncherWindow: Sendable, Equatable {
    /// The vault's key is kept in the kernel keyring, and the copies with it.
    case cachedKey
    /// The tokens are copied into the kernel keyring; the keystore needs no key (OpenBao).
    case copiedTokens
    /// None, and why (said by `latchkey unlock` and `lock`).
    case none(reason: String)
}

extension Keystore {
    public func prepareForWriting() async throws(KeystoreError) {
        _ = try await records()
    }

    /// `update` running `body` in the caller's isolation, so callers need not make it `Sendable`.
    public func update<Result: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result {
        try await update(isolation: isolation, body)
    }

    public func record(_ identity: AccountIdentity) async throws(KeystoreError) -> AccountRecord? {
        try await records().first { $0.identity == identity }
    }

    /// `updateAccount` running `body` in the caller's isolation.
    public func updateAccount<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)? = #isolation,
        _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result {
        try await updateAccount(identity, isolation: isolation, body)
    }

    /// `updateAccount` as `update` filtered to the one record, for keystores whose lock covers
    /// every record anyway.
    public func updatingOneRecord<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)?,
        _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result {
        try await update(isolation: isolation) { records in
            let index = records.firstIndex { $0.identity == identity }
            var record = index.map { records[$0] }
            let result = try await body(&record)
            precondition(record.map(\.identity) ?? identity == identity, "updateAccount's body changed the account's identity")
            switch (index, record) {
            case (let index?, let record?): records[index] = record
            case (let index?, nil): records.remove(at: index)
            case (nil, let record?): records.append(record)
            case (nil, nil): break
            }
            return result
        }
    }

    /// `updateRegisteredClients` running `body` in the caller's isolation.
    public func updateRegisteredClients<Result: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (inout [RegisteredClient]) async throws -> Result
    ) async throws -> Result {
        try await updateRegisteredClients(isolation: isolation, body)
    }

    /// The client registered for `provider`, if there is one.
    public func registeredClient(for provider: String) async throws(KeystoreError) -> RegisteredClient? {
        try await registeredClients().first { $0.provider == provider }
    }
}

/// Why the keystore could not be used. Files are named; secrets never are.
public enum KeystoreError: LatchkeyError, Equatable {
    case locked(String)
    /// There is no vault yet, and no passphrase to create one with: `how` says how to give one.
    case noVault(String)
    case wrongPassphrase(path: String)
    case damaged(path: String, reason: String)
    case newerFormat(path: String, version: Int)
    case unsafePermissions(path: String, mode: String)
    /// The vault's directory can be written by others, or belongs to another user (`otherOwner`).
    case unsafeDirectory(path: String, mode: String, otherOwner: Int?)
    /// What is at the vault's path cannot be a vault: not a regular file, too large, or another user's.
    case notAVaultFile(path: String, reason: String)
    case passphraseFile(path: String, reason: String)
    case io(path: String, reason: String)
    case configuration(String)
    /// The `openbao` keystore's cluster refused, could not be reached, or holds what Latchkey
    /// does not write.
    case openBao(OpenBaoError)
    /// `latchkey unlock` or `lock` of a keystore without a launcher window, and why.
    case noLauncherWindow(String)

    public var category: FailureCategory {
        if case .configuration = self { return .configuration }
        if case .noLauncherWindow = self { return .usage }
        if case .openBao(let error) = self { return error.category }
        return .keystore
    }

    /// `AtomicFile`'s or `FileLock`'s failure, as the keystore says it.
    init(_ error: FileError) {
        switch error {
        case .io(let path, let reason): self = .io(path: path, reason: reason)
        case .refused(let problem, let path): self.init(problem, path: path)
        }
    }

    /// `body`'s file failure as the keystore says it.
    static func file<Value>(_ body: () throws(FileError) -> Value) throws(KeystoreError) -> Value {
        do {
            return try body()
        } catch {
            throw KeystoreError(error)
        }
    }

    /// `body`'s file failure as the keystore says it, for a lock being taken.
    static func file<Value>(_ body: () async throws(FileError) -> Value) async throws(KeystoreError) -> Value {
        do {
            return try await body()
        } catch {
            throw KeystoreError(error)
        }
    }

    /// What `VaultFile` refused about the file at `path` (a vault, or the OpenBao journal).
    init(_ problem: VaultFile.Problem, path: String) {
        switch problem {
        case .unsafeDirectory(let directory, let mode, let owner):
            self = .unsafeDirectory(path: directory, mode: String(mode, radix: 8), otherOwner: owner.map(Int.init))
        case .accessibleByOthers(let mode):
            self = .unsafePermissions(path: path, mode: String(mode, radix: 8))
        case .ownedByAnotherUser(let owner):
            self = .notAVaultFile(path: path, reason: "it belongs to another user (uid \(owner))")
        case .notARegularFile(let kind):
            self = .notAVaultFile(path: path, reason: "it is \(kind), not a regular file")
        case .tooLarge(let bytes):
            self = .notAVaultFile(
                path: path, reason: "it is \(bytes) bytes, larger than any vault Latchkey writes (\(VaultFile.largestSize >> 20) MiB)")
        case .changedWhileRead:
            self = .io(path: path, reason: "it grew while being read (something writes into it); retry")
        case .unreadable(let error):
            self = .io(path: path, reason: String(cString: strerror(error)))
        }
    }

    public var description: String {
        switch self {
        case .locked(let how):
            return "the vault is locked: \(how)"
        case .noVault(let how):
            return "there is no vault yet to keep the account in: \(how)"
        case .wrongPassphrase(let path):
            return "wrong passphrase for \(path) (nothing was changed)"
        case .damaged(let path, let reason):
            return "\(path) is damaged: \(reason). It was left untouched; restore it from a backup or move it aside and sign in again"
        case .newerFormat(let path, let version):
            return "\(path) was written by a newer Latchkey (vault format \(version)); upgrade Latchkey. The file was left untouched"
        case .unsafePermissions(let path, let mode):
            return
                "\(path) is accessible by other users (mode \(mode)); run `chmod 600 \(path)` (and `chmod 700` on its directory), then retry"
        case .unsafeDirectory(let path, let mode, let otherOwner):
            if let owner = otherOwner {
                return
                    "\(path) belongs to another user (uid \(owner)), who could replace the vault in it; move the vault to a directory of your own (XDG_DATA_HOME)"
            }
            return
                "\(path) can be written by other users (mode \(mode)), who could replace the vault in it; run `chmod 700 \(path)`, then retry"
        case .notAVaultFile(let path, let reason):
            return "\(path) cannot be the vault: \(reason). It was left untouched; move it aside, then retry"
        case .passphraseFile(let path, let reason):
            return "cannot use LATCHKEY_PASSPHRASE_FILE \(path): \(reason)"
        case .io(let path, let reason):
            return "cannot access \(path): \(reason)"
        case .configuration(let errors):
            return "config.toml cannot be used until it is fixed:\n\(errors)"
        case .openBao(let error):
            return error.description
        case .noLauncherWindow(let reason):
            return reason
        }
    }
}
