import CLatchkeySys
import Foundation
import LatchkeyVault
import Synchronization
import LatchkeyKeystore

/// The agent's keystore: its records kept decrypted in memory as long as the vault file is the
/// one they were read from, so a token request costs a `stat`, not a read, an AEAD open and a
/// decode. Every write goes to the keystore underneath (under its lock, as before), and any
/// change to the file (a write renames a new one over it) makes the next read read it again, so
/// what another process wrote is seen at once.
final class RecentRecords: Keystore {
    private let base: any Keystore
    /// The file whose identity says whether the records are current.
    private let path: String
    private let cached = Mutex<(identity: FileIdentity, records: [AccountRecord])?>(nil)

    init(_ base: any Keystore, path: String) {
        self.base = base
        self.path = path
    }

    var backendName: String { base.backendName }

    func records() async throws(KeystoreError) -> [AccountRecord] {
        // Taken before reading: a file replaced in between makes the next call read again.
        guard let identity = FileIdentity(path: path) else { return try await base.records() }
        if let cached = cached.withLock({ $0 }), cached.identity == identity { return cached.records }
        let records = try await base.records()
        cached.withLock { $0 = (identity, records) }
        return records
    }

    func update<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result {
        defer { cached.withLock { $0 = nil } }
        return try await base.update(isolation: isolation, body)
    }

    func updateAccount<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)?, _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result {
        defer { cached.withLock { $0 = nil } }
        return try await base.updateAccount(identity, isolation: isolation, body)
    }

    func registeredClients() async throws(KeystoreError) -> [RegisteredClient] { try await base.registeredClients() }

    func updateRegisteredClients<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [RegisteredClient]) async throws -> Result
    ) async throws -> Result {
        defer { cached.withLock { $0 = nil } }
        return try await base.updateRegisteredClients(isolation: isolation, body)
    }

    func prepareForWriting() async throws(KeystoreError) { try await base.prepareForWriting() }

    /// Forgets the records (the agent was told to lock).
    func forget() { cached.withLock { $0 = nil } }
}

/// Which file is at a path, and which version of it: device, inode, size and change times.
/// Every save renames a new file into place, so any write gives another identity.
struct FileIdentity: Equatable, Sendable {
    var device, inode, size, modified, changed: Int64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = Int64(bitPattern: UInt64(info.st_dev))
        inode = Int64(bitPattern: UInt64(info.st_ino))
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }
}
