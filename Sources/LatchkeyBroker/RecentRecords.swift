import CLatchkeySys
import Foundation
import LatchkeyKeystore
import LatchkeySupport
import LatchkeyVault
import Synchronization

/// The agent's keystore: its records kept in memory for as long as the keystore underneath says
/// they stay current (`Keystore.freshness`), so a token request costs a `stat` (a vault: while
/// the file is the one they were read from) or nothing (OpenBao: for a few seconds), not a read,
/// an AEAD open or a round trip and a decode. Every write goes to the keystore underneath (under
/// its lock, as before) and forgets them; any change to a vault file (a write renames a new one
/// over it) makes the next read read it again, so what another process wrote is seen at once, and
/// what another machine wrote to OpenBao within `OpenBaoKeystore.cacheSeconds`.
final class RecentRecords: Keystore {
    private let base: any Keystore
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let cached = Mutex<(stamp: Stamp, records: [AccountRecord])?>(nil)

    /// What says the records read are still current.
    private enum Stamp: Equatable {
        case file(FileIdentity)
        case until(ContinuousClock.Instant)
    }

    init(_ base: any Keystore, clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.base = base
        self.clock = clock
    }

    var backendName: String { base.backendName }
    var location: String { base.location }
    var freshness: RecordsFreshness { base.freshness }
    var launcherWindow: LauncherWindow { base.launcherWindow }

    func records() async throws(KeystoreError) -> [AccountRecord] {
        // Taken before reading: a file replaced in between makes the next call read again.
        let stamp: Stamp
        switch base.freshness {
        case .whileFileUnchanged(let path):
            guard let identity = FileIdentity(path: path) else { return try await base.records() }
            stamp = .file(identity)
            if let cached = cached.withLock({ $0 }), cached.stamp == stamp { return cached.records }
        case .forSeconds(let seconds):
            let now = clock()
            if let cached = cached.withLock({ $0 }), case .until(let end) = cached.stamp, now < end { return cached.records }
            stamp = .until(now + .milliseconds(Int(seconds * 1000)))
        }
        let records = try await base.records()
        cached.withLock { $0 = (stamp, records) }
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

    func unlock(for duration: TimeInterval) async throws -> Date { try await base.unlock(for: duration) }

    @discardableResult
    func lock() -> Bool {
        cached.withLock { $0 = nil }
        return base.lock()
    }

    func keepAnswerForLauncher(_ text: [UInt8], key: (_ location: String) -> String, of record: AccountRecord, until: Date) {
        base.keepAnswerForLauncher(text, key: key, of: record, until: until)
    }

    func findings(environment: [String: String]) async -> [Finding] { await base.findings(environment: environment) }
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
