import CLatchkeySys
import Foundation
import LatchkeyCrypto
import LatchkeyEssentials
import LatchkeySupport
import LatchkeyVault

/// Changes the `openbao` keystore could not write back after a provider answered (a rotated
/// refresh token among them), kept on this machine until OpenBao takes them.
///
/// A 0600 file in the data directory, written as the vault is (`AtomicFile`) and read with the
/// vault's checks (the owner's, a regular file, no access for others). Every read-modify-write
/// holds an `flock` on `openbao.journal.lock` beside it (`FileLock`, which queues the tasks of one
/// process first), so that two processes, or two of the agent's tasks, whose write backs fail at
/// once both keep their change: each replaced the whole file before, and all but one rotated
/// refresh token were lost.
///
/// It holds what recovery needs and nothing more: per account, the newest change, with the
/// rotated refresh token. The access token, the ID token, narrowed tokens and AWS credentials are
/// left out (the account is refreshed on its next use); the DPoP private key is kept only as its
/// SHA-256, and taken back from OpenBao's record, which holds it, when the change is written
/// (`OpenBaoKeystore.writeJournal`). A change bound to a key OpenBao does not hold is never kept
/// (`Entry.init?`).
public struct OpenBaoJournal: Sendable {
    /// Where the journal is kept.
    public let path: String
    /// The engine and path the records belong to: a journal for another is not written elsewhere.
    let mount: String
    let secretPath: String

    init(path: String, mount: String, path secretPath: String) {
        self.path = path
        self.mount = mount
        self.secretPath = secretPath
    }

    /// One account's new state as the write back had it: its record, or `nil` when it was
    /// removed, and when (the record's `updatedAt`, or the moment of the removal).
    struct Change: Sendable, Equatable {
        var name: String
        var record: AccountRecord?
        var at: Date
    }

    /// One change as the journal keeps it: the record without what recovery does not need.
    struct Entry: Codable, Sendable, Equatable {
        /// The account's secret name under `accounts/`.
        var name: String
        /// When the change was made: the newest per account is kept, and a record OpenBao holds
        /// from later is never written over.
        var at: Date
        /// The record without its access token, ID token, narrowed tokens, AWS credentials and
        /// DPoP key (expiring at `at`, so it is refreshed before use); `nil` for a removal.
        var record: AccountRecord?
        /// SHA-256 (hex) of the DPoP key the tokens are bound to, which OpenBao's record holds.
        var proofKeyDigest: String?

        /// `change` as the journal keeps it; `nil` when its tokens are bound to a DPoP key that
        /// `held` (OpenBao's record, as read under the lease) is not: that key would have to be
        /// written here in clear.
        init?(_ change: Change, proofKeyHeldByOpenBao held: Secret?) {
            name = change.name
            at = change.at
            guard var record = change.record else { return }
            if let key = record.dpopKey {
                guard key == held else { return nil }
                proofKeyDigest = Self.digest(of: key)
            }
            record.accessToken = Secret("")
            record.expiresAt = record.updatedAt
            record.idToken = nil
            record.dpopKey = nil
            record.narrowedTokens = nil
            record.awsCredentials = nil
            self.record = record
        }

        /// Whether `key` is the one the tokens are bound to.
        func isProofKey(_ key: Secret?) -> Bool { key.map(Self.digest) == proofKeyDigest }

        static func digest(of key: Secret) -> String {
            SHA256.hash(data: Array(key.exposedValue.utf8)).hexadecimal
        }

        private enum CodingKeys: String, CodingKey { case name, at, record, proofKeyDigest }

        /// Journals written before `at` existed held whole records: their time is the record's.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            record = try container.decodeIfPresent(AccountRecord.self, forKey: .record)
            proofKeyDigest = try container.decodeIfPresent(String.self, forKey: .proofKeyDigest)
            at = try container.decodeIfPresent(Date.self, forKey: .at) ?? record?.updatedAt ?? .distantPast
        }
    }

    private struct Contents: Codable {
        var mount: String
        var path: String
        var changes: [Entry]
    }

    /// Whether records wait to be written (`latchkey doctor` says so).
    public var isPending: Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The changes waiting (none when there is no journal), read without the lock: for `doctor`.
    func entries() throws(KeystoreError) -> [Entry] { try load() ?? [] }

    /// Adds `entries`, keeping per account the newest change (a later one holds the refresh token
    /// the earlier one's was rotated into).
    func add(_ entries: [Entry]) async throws(KeystoreError) {
        guard !entries.isEmpty else { return }
        try await rewrite { kept in kept = Self.merged(kept, entries) }
    }

    /// Runs `work` on the changes waiting, under the journal's lock, and keeps what it leaves:
    /// the file is removed when nothing is left, and left as it was when `work` throws.
    func rewrite<Result>(_ work: (inout [Entry]) async throws -> Result) async throws(KeystoreError) -> Result {
        try KeystoreError.file { () throws(FileError) in try AtomicFile.ensureDirectory(VaultFile.directory(of: path), of: path) }
        let lock = try await KeystoreError.file { () async throws(FileError) in try await FileLock.acquire(path: path + ".lock") }
        defer { lock.release() }
        let before = try load() ?? []
        var entries = before
        let result: Result
        do {
            result = try await work(&entries)
        } catch let error as KeystoreError {
            throw error
        } catch let error as OpenBaoError {
            throw .openBao(error)
        } catch {
            throw .io(path: path, reason: String(describing: error))
        }
        guard entries != before else { return result }
        if entries.isEmpty {
            guard unlink(path) == 0 || errno == ENOENT else { throw .io(path: path, reason: String(cString: strerror(errno))) }
        } else {
            try save(entries)
        }
        return result
    }

    /// `kept` with `new` merged in: one entry per account, the newest by `at` (a tie goes to
    /// `new`, written later), in the order accounts first appeared.
    static func merged(_ kept: [Entry], _ new: [Entry]) -> [Entry] {
        var merged = kept
        for entry in new {
            if let position = merged.firstIndex(where: { $0.name == entry.name }) {
                if entry.at >= merged[position].at { merged[position] = entry }
            } else {
                merged.append(entry)
            }
        }
        return merged
    }

    /// The changes waiting, `nil` when there are none.
    private func load() throws(KeystoreError) -> [Entry]? {
        let bytes: [UInt8]
        switch VaultFile.read(path) {
        case .success(let read?): bytes = read
        case .success(nil): return nil
        case .failure(let problem): throw KeystoreError(problem, path: path)
        }
        guard let contents = try? OpenBaoKeystore.decoder.decode(Contents.self, from: Data(bytes)) else {
            throw .damaged(path: path, reason: "it is not a journal of this Latchkey's")
        }
        guard contents.mount == mount, contents.path == secretPath else {
            throw .io(
                path: path,
                reason:
                    "it holds records for OpenBao's \(contents.mount)/\(contents.path), not the configured \(mount)/\(secretPath); set [openbao] back to write them there"
            )
        }
        return contents.changes
    }

    private func save(_ entries: [Entry]) throws(KeystoreError) {
        guard let bytes = try? OpenBaoKeystore.encoder.encode(Contents(mount: mount, path: secretPath, changes: entries)) else {
            throw .io(path: path, reason: "the records cannot be written as JSON")
        }
        try KeystoreError.file { () throws(FileError) in try AtomicFile.replace(path, with: Array(bytes)) }
    }
}
