public import Foundation
import LatchkeyCrypto
import LatchkeyEssentials
public import LatchkeyProviders
public import LatchkeySupport
public import LatchkeyVault
import Synchronization

/// The `openbao` keystore: a team's accounts in a KV version 2 engine that many machines share,
/// one secret per account under `[openbao] path`/accounts, the registered clients in one secret
/// at `path`/clients, a lease per account under `path`/leases and one for the whole path at
/// `path`/lease.
///
/// A provider that rotates refresh tokens revokes the whole family when one is used twice, so two
/// machines must never refresh one account at once. `updateAccount`, which every refresh goes
/// through, therefore takes the account's lease first (a check-and-set write of an owner and a
/// deadline; an expired lease is taken over, a live one waited for up to `leaseWait`), then reads
/// the record, runs its body (which may refresh over the network), writes the record back with
/// check-and-set on the version it read, and releases the lease. A machine that waited reads the
/// tokens the other wrote and, as the refresh re-checks validity inside the body, does not
/// refresh again. Refreshes of different accounts take different leases and run at once. When
/// OpenBao cannot be reached no body runs; when the write back fails after the body ran, the new
/// record waits in the journal (`OpenBaoJournal`) and is written before any later body runs.
///
/// `update`, whose body sees every record and may change any (a sign-in may replace the default,
/// a logout removes one), takes the path's lease, and the two kinds exclude each other without a
/// write that spans two secrets: each side writes its own lease, then reads the other kind
/// (forwarded to the active node, after its own write). An account lease that finds the path's
/// lease held is given back and taken again after a random pause; the path's lease, once
/// written, waits for the account leases it finds to end. Of two that race, at least one sees
/// the other's lease, as both read after their own write on one Raft log.
public final class OpenBaoKeystore: Keystore {
    public let backendName = "openbao"
    public let settings: OpenBaoSettings
    let client: OpenBaoClient
    private let environment: [String: String]
    /// New records OpenBao did not take yet, on this machine.
    public let journal: OpenBaoJournal
    /// How long a lease holds: a machine killed mid-refresh blocks the others at most this long.
    let leaseDuration: TimeInterval
    /// How long `update` waits for a live lease before it fails: longer than `leaseDuration`, so
    /// a lease whose holder died is always taken over.
    let leaseWait: TimeInterval
    let now: @Sendable () -> Date
    let pause: @Sendable (Duration) async -> Void
    /// Who this process is in the lease: host, process and a random tag.
    let owner: String
    /// The token, obtained once per process (an AppRole login is a request).
    private let token = Mutex<Secret?>(nil)
    /// The launcher's copies, made from every read and write while `unlock --for` lasts; `nil`
    /// when config.toml does not choose this keystore (a one-off `--keystore openbao`).
    public let launcherCopies: LauncherCopies?

    public init(
        settings: OpenBaoSettings, transport: any HTTPTransport, environment: [String: String], journalPath: String,
        launcherCopies: LauncherCopies? = nil, leaseDuration: TimeInterval = 60, leaseWait: TimeInterval = 90,
        now: @escaping @Sendable () -> Date = { Date() },
        pause: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    ) {
        self.settings = settings
        client = OpenBaoClient(addresses: settings.addresses, transport: transport, pause: pause)
        self.environment = environment
        self.launcherCopies = launcherCopies
        journal = OpenBaoJournal(path: journalPath, mount: settings.mount, path: settings.path)
        self.leaseDuration = leaseDuration
        self.leaseWait = leaseWait
        self.now = now
        self.pause = pause
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count - 1) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown host"
        owner = "\(host) pid \(getpid()) \(SecureRandom.token(byteCount: 6))"
    }

    var accountsPath: String { settings.path + "/accounts" }
    var clientsPath: String { settings.path + "/clients" }
    var leasePath: String { settings.path + "/lease" }
    var accountLeasesPath: String { settings.path + "/leases" }

    // MARK: - Keystore

    public func records() async throws(KeystoreError) -> [AccountRecord] {
        try await Self.typed {
            let token = try await self.currentToken()
            // A change OpenBao still refuses waits (reading needs none of them); a journal this
            // machine must not use (others can read it, another path's) stops the command.
            _ = try await self.writePendingJournal(token)
            return try await self.readMakingCopies(token)
        }
    }

    /// One read of one secret, where `Keystore`'s default reads every account.
    public func record(_ identity: AccountIdentity) async throws(KeystoreError) -> AccountRecord? {
        try await Self.typed {
            let token = try await self.currentToken()
            let name = Self.name(of: identity)
            // OpenBao's copy of an account whose change it still refuses is not the account's.
            if let error = try await self.writePendingJournal(token)[name] { throw error }
            return try await self.readAccount(name, token: token).record
        }
    }

    public func updateAccount<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)?,
        _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result {
        let token = try await Self.typed { try await self.currentToken() }
        let name = Self.name(of: identity)
        let inProcess = AsyncLock.forPath(lockKey(accountLeasesPath + "/" + name))
        await inProcess.lock()
        defer { inProcess.unlock() }
        let lease = try await Self.typed { try await self.takeAccountLease(name, token) }
        do {
            // This account's tokens a provider rotated, still only here, go first: the body must
            // refresh from them. Under its lease, so no write back of it can be journaled between
            // this and the read; other accounts' changes OpenBao still refuses do not stop it.
            if let error = try await Self.typed({ try await self.writeJournal(token, after: lease.index, of: name) })[name] {
                throw error
            }
            let stored = try await Self.typed { try await self.readAccount(name, token: token, after: lease.index) }
            var record = stored.record
            let result = try await body(&record)
            precondition(record.map(\.identity) ?? identity == identity, "updateAccount's body changed the account's identity")
            let changed = record != stored.record
            if changed {
                try await Self.typed {
                    try await self.writeBack(
                        [.init(name: name, record: record, at: record?.updatedAt ?? self.now())], over: [stored], token: token,
                        after: lease.index)
                }
            }
            // The copies' read needs no lease: it goes beside the release (a Raft write).
            async let released: Void = release(lease, token: token)
            if changed { try? await copiesAfterWrite(token, after: lease.index) }
            await released
            return result
        } catch {
            await release(lease, token: token)
            throw error
        }
    }

    public func update<Result: Sendable>(
        isolation: isolated (any Actor)?,
        _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result {
        let token = try await Self.typed { try await self.currentToken() }
        let inProcess = AsyncLock.forPath(lockKey(leasePath))
        await inProcess.lock()
        defer { inProcess.unlock() }
        let lease = try await Self.typed { try await self.takePathLease(token) }
        do {
            // Tokens a provider rotated, still only here, go first: the body, which may change any
            // account, runs only once every one is written.
            if let error = try await Self.typed({ try await self.writeJournal(token, after: lease.index) }).values.first {
                throw error
            }
            let stored = try await Self.typed { try await self.readAccounts(token, after: lease.index) }
            var records = Self.ordered(stored.compactMap(\.record))
            let before = records
            let result = try await body(&records)
            if records != before {
                let changes = Self.changes(from: stored, to: records, at: now())
                try await Self.typed { try await self.writeBack(changes, over: stored, token: token, after: lease.index) }
            }
            async let released: Void = release(lease, token: token)
            if records != before {
                try? await copiesAfterWrite(token, after: lease.index)
            } else {
                makeCopies(from: stored)
            }
            await released
            return result
        } catch {
            await release(lease, token: token)
            throw error
        }
    }

    public func registeredClients() async throws(KeystoreError) -> [RegisteredClient] {
        try await Self.typed { try await self.readClients(try await self.currentToken()).clients }
    }

    public func updateRegisteredClients<Result: Sendable>(
        isolation: isolated (any Actor)?,
        _ body: (inout [RegisteredClient]) async throws -> Result
    ) async throws -> Result {
        let token = try await Self.typed { try await self.currentToken() }
        let inProcess = AsyncLock.forPath(lockKey(leasePath))
        await inProcess.lock()
        defer { inProcess.unlock() }
        let lease = try await Self.typed { try await self.takePathLease(token) }
        do {
            let (version, read) = try await Self.typed { try await self.readClients(token, after: lease.index) }
            var clients = read
            let result = try await body(&clients)
            if clients != read {
                let data = try Self.typed { () throws(OpenBaoError) in
                    [Self.marker: Kind.clients.rawValue, "clients": try Self.json(clients)]
                }
                _ = try await Self.typed {
                    try await self.client.write(
                        data, mount: self.settings.mount, path: self.clientsPath, replacing: version, token: token, after: lease.index)
                }
            }
            await release(lease, token: token)
            return result
        } catch {
            await release(lease, token: token)
            throw error
        }
    }

    public func keepAnswerForLauncher(_ text: [UInt8], key: (_ location: String) -> String, of record: AccountRecord, until: Date) {
        launcherCopies?.keepAnswer(text, key: key, of: record, until: until)
    }

    /// The cluster's first address and the KV path the accounts are kept under.
    public var location: String { "openbao \(settings.addresses.first?.absoluteString ?? "") \(settings.mount)/\(settings.path)" }

    /// How long the agent trusts what it read: another machine's logout is seen within it.
    public static let cacheSeconds: TimeInterval = 5

    public var freshness: RecordsFreshness { .forSeconds(Self.cacheSeconds) }

    public var launcherWindow: LauncherWindow {
        launcherCopies == nil
            ? .none(
                reason:
                    "the openbao keystore's tokens are copied for the launcher only when config.toml chooses it (keystore = \"openbao\"), not with --keystore"
            )
            : .copiedTokens
    }

    /// Opens the window in which the launcher answers from copies of the tokens: a read makes
    /// them (no passphrase: OpenBao's token reads them).
    public func unlock(for duration: TimeInterval) async throws -> Date {
        guard let launcherCopies else {
            guard case .none(let reason) = launcherWindow else { throw KeystoreError.noLauncherWindow("") }
            throw KeystoreError.noLauncherWindow(reason)
        }
        return try await launcherCopies.unlock(for: duration) { _ = try await records() }
    }

    @discardableResult
    public func lock() -> Bool { launcherCopies?.lock() ?? false }

    // MARK: - Reading

    /// Every record, each account secret read once (eight at a time), with the launcher's copies
    /// made from them while `unlock --for` lasts. A read older than the copies there (another
    /// command wrote and made its copies meanwhile: `CopiesVersions`) is made again, up to three
    /// times; each begins after that write, so the next is at least as new.
    func readMakingCopies(_ token: Secret, after index: StorageIndex? = nil) async throws -> [AccountRecord] {
        var attempt = 1
        while true {
            let stored = try await readAccounts(token, after: index)
            if makeCopies(from: stored) || attempt == 3 { return Self.ordered(stored.compactMap(\.record)) }
            attempt += 1
        }
    }

    /// Makes the launcher's copies from `stored` while a window is open; `false` when copies
    /// from a later read are there (`CopiesVersions`).
    @discardableResult
    private func makeCopies(from stored: [StoredAccount]) -> Bool {
        guard let launcherCopies else { return true }
        let versions = Dictionary(stored.map { ($0.name, $0.version) }, uniquingKeysWith: max)
        return launcherCopies.sync(Self.ordered(stored.compactMap(\.record)), versions: versions)
    }

    /// After a write: the copies made anew from every record while a window is open (they are
    /// made from all of them), read as of the write.
    func copiesAfterWrite(_ token: Secret, after index: StorageIndex) async throws {
        guard launcherCopies?.unlockedUntil != nil else { return }
        _ = try await readMakingCopies(token, after: index)
    }

    /// One account's secret as read: its name under `accounts/`, its version, and the record
    /// (`nil` when removed).
    struct StoredAccount: Sendable {
        var name: String
        var version: Int
        var record: AccountRecord?
    }

    /// Every secret under `accounts/`, each Latchkey's or refused; under the lease, as of `index`.
    /// Read several at a time: one after another, a path of a hundred accounts took a hundred
    /// round trips for every `records()`.
    func readAccounts(_ token: Secret, after index: StorageIndex? = nil) async throws -> [StoredAccount] {
        let names = try await secretNames(under: accountsPath, token: token, after: index)
        return try await Self.concurrently(names) { name in try await self.readAccount(name, token: token, after: index) }
            .filter { $0.version > 0 }
    }

    /// The secret `accounts/NAME` (version 0 and no record: never written).
    func readAccount(_ name: String, token: Secret, after index: StorageIndex? = nil) async throws -> StoredAccount {
        guard let secret = try await client.read(mount: settings.mount, path: accountsPath + "/" + name, token: token, after: index) else {
            return StoredAccount(name: name, version: 0, record: nil)
        }
        return StoredAccount(name: name, version: secret.version, record: try account(in: secret, name: name))
    }

    /// The secrets' names listed under `path`, each a name Latchkey writes or refused.
    func secretNames(under path: String, token: Secret, after index: StorageIndex?) async throws -> [String] {
        let names = try await client.list(mount: settings.mount, path: path, token: token, after: index).filter { !$0.hasSuffix("/") }
        for name in names where !OpenBaoNames.isName(name[...]) { throw OpenBaoError.notLatchkeys(path: full(path + "/" + name)) }
        return names
    }

    /// The record a secret under `accounts/` holds; `nil` for a removed one. A secret Latchkey
    /// did not write, or a record kept under another account's name, is refused.
    func account(in secret: KVSecret, name: String) throws -> AccountRecord? {
        let path = full(accountsPath + "/" + name)
        guard let data = secret.data else { return nil }
        switch data[Self.marker] {
        case .string(Kind.removed.rawValue)?:
            return nil
        case .string(Kind.account.rawValue)?:
            guard case .string(let text)? = data["record"], let record = try? Self.decoder.decode(AccountRecord.self, from: Data(text.utf8))
            else { throw KeystoreError.damaged(path: "OpenBao's \(path)", reason: "its record is not one this Latchkey reads") }
            guard Self.name(of: record) == name else {
                throw KeystoreError.damaged(path: "OpenBao's \(path)", reason: "it holds the record of another account")
            }
            return record
        default:
            throw OpenBaoError.notLatchkeys(path: path)
        }
    }

    /// The registered clients and the version they were read at (0: never written).
    func readClients(_ token: Secret, after index: StorageIndex? = nil) async throws -> (version: Int, clients: [RegisteredClient]) {
        guard let secret = try await client.read(mount: settings.mount, path: clientsPath, token: token, after: index) else {
            return (0, [])
        }
        guard let data = secret.data else { return (secret.version, []) }
        guard data[Self.marker] == .string(Kind.clients.rawValue) else { throw OpenBaoError.notLatchkeys(path: full(clientsPath)) }
        guard case .string(let text)? = data["clients"],
            let clients = try? Self.decoder.decode([RegisteredClient].self, from: Data(text.utf8))
        else { throw KeystoreError.damaged(path: "OpenBao's \(full(clientsPath))", reason: "its clients are not ones this Latchkey reads") }
        return (secret.version, clients)
    }

    // MARK: - Writing

    /// What `update`'s body changed: each record to write under its name, `nil` to remove (at
    /// `at`, the moment of the removal, which a journaled removal is compared by).
    static func changes(from stored: [StoredAccount], to records: [AccountRecord], at: Date) -> [OpenBaoJournal.Change] {
        let before = Dictionary(stored.map { ($0.name, $0.record) }, uniquingKeysWith: { $1 })
        var changes: [OpenBaoJournal.Change] = []
        var kept = Set<String>()
        for record in records {
            let name = name(of: record)
            kept.insert(name)
            if before[name] ?? nil != record { changes.append(.init(name: name, record: record, at: record.updatedAt)) }
        }
        for entry in stored where entry.record != nil && !kept.contains(entry.name) {
            changes.append(.init(name: entry.name, record: nil, at: at))
        }
        return changes
    }

    /// Writes `changes` with check-and-set on the versions read. What OpenBao did not take
    /// (unreachable, another writer first) is kept in the journal: the provider already answered,
    /// and a rotated refresh token that is lost is lost for everyone. A change bound to a DPoP key
    /// OpenBao does not hold (a sign-in) is not: its key would reach the disk in clear.
    func writeBack(_ changes: [OpenBaoJournal.Change], over stored: [StoredAccount], token: Secret, after index: StorageIndex)
        async throws
    {
        let versions = Dictionary(stored.map { ($0.name, $0.version) }, uniquingKeysWith: { $1 })
        for (position, change) in changes.enumerated() {
            do {
                _ = try await client.write(
                    try Self.data(for: change), mount: settings.mount, path: accountsPath + "/" + change.name,
                    replacing: versions[change.name] ?? 0, token: token, after: index)
            } catch {
                let keys = Dictionary(stored.map { ($0.name, $0.record?.dpopKey) }, uniquingKeysWith: { $1 })
                let left = changes[position...]
                let entries = left.compactMap { OpenBaoJournal.Entry($0, proofKeyHeldByOpenBao: keys[$0.name] ?? nil) }
                try await journal.add(entries)
                let dropped = left.filter { change in !entries.contains { $0.name == change.name } }
                guard dropped.isEmpty else {
                    throw OpenBaoError.newProofKeyNotKept(
                        paths: dropped.map { full(accountsPath + "/" + $0.name) }, cause: String(describing: error))
                }
                return
            }
        }
    }

    /// Writes the journal, when it holds anything, under the path's lease; returns the changes
    /// still waiting, by account secret name, with why OpenBao did not take them.
    func writePendingJournal(_ token: Secret) async throws -> [String: KeystoreError] {
        guard journal.isPending else { return [:] }
        return try await underLease(token) { lease in try await self.writeJournal(token, after: lease.index) }
    }

    /// Writes what the journal holds (only the account stored as `name`, when given: under its
    /// lease), as a live write back would: over the version there now (check-and-set), unless
    /// OpenBao holds a record or a removal from later than the change; a removal never removes a
    /// record written after it. What OpenBao refuses stays in the journal; the rest leaves it.
    /// Returns what stays, by name, with why.
    func writeJournal(_ token: Secret, after index: StorageIndex, of name: String? = nil) async throws -> [String: KeystoreError] {
        guard journal.isPending else { return [:] }
        return try await journal.rewrite { entries in
            var waiting: [String: KeystoreError] = [:]
            var left: [OpenBaoJournal.Entry] = []
            for entry in entries {
                guard name == nil || entry.name == name else {
                    left.append(entry)
                    continue
                }
                do {
                    try await self.writeJournaled(entry, token: token, after: index)
                } catch {
                    waiting[entry.name] = Self.keystoreError(error)
                    left.append(entry)
                }
            }
            entries = left
            return waiting
        }
    }

    /// Writes one journaled change unless OpenBao holds a later one, taking back the DPoP key
    /// and ID token from OpenBao's record (the journal holds neither); a change whose key
    /// OpenBao no longer holds is dropped, as its refresh token is useless without it.
    private func writeJournaled(_ entry: OpenBaoJournal.Entry, token: Secret, after index: StorageIndex) async throws {
        let path = accountsPath + "/" + entry.name
        let secret = try await client.read(mount: settings.mount, path: path, token: token, after: index)
        let current = try secret.flatMap { secret in try account(in: secret, name: entry.name) }
        if let written = current?.updatedAt ?? secret.flatMap(Self.removedAt), written > entry.at { return }
        var record = entry.record
        if var kept = record {
            if entry.proofKeyDigest != nil {
                guard entry.isProofKey(current?.dpopKey) else { return }
                kept.dpopKey = current?.dpopKey
            }
            kept.idToken = kept.idToken ?? current?.idToken
            record = kept
        }
        _ = try await client.write(
            try Self.data(for: .init(name: entry.name, record: record, at: entry.at)), mount: settings.mount, path: path,
            replacing: secret?.version ?? 0, token: token, after: index)
    }

    /// When the removal marker `secret` holds was written (markers from before the time was kept
    /// count as long ago); `nil` for a deleted version.
    static func removedAt(_ secret: KVSecret) -> Date? {
        guard let data = secret.data else { return nil }
        guard case .string(let text)? = data["removedAt"], let seconds = Double(text), seconds.isFinite else { return .distantPast }
        return Date(timeIntervalSince1970: seconds)
    }

    // MARK: - The leases

    /// A lease taken: where, its version (to release it) and the storage index of its write,
    /// which every request made under it carries (`StorageIndex`).
    struct Lease: Sendable {
        let path: String
        var version: Int
        let index: StorageIndex
    }

    /// Who holds a live lease, and until when.
    struct Holder {
        var owner: String
        var deadline: Date
    }

    /// Takes the lease of the account stored under `name`, once the path's lease is free.
    func takeAccountLease(_ name: String, _ token: Secret) async throws -> Lease {
        let started = now()
        while true {
            let lease = try await takeLease(at: accountLeasesPath + "/" + name, token, started: started)
            let pathLease = try await client.read(mount: settings.mount, path: leasePath, token: token, after: lease.index)
            guard let holder = try holder(of: pathLease, at: leasePath) else { return lease }
            // A change to several accounts is under way or waiting for this one: give way to it.
            await release(lease, token: token)
            try await waitedTooLong(since: started, for: holder, at: leasePath)
        }
    }

    /// Takes the path's lease, then waits for every account lease it finds held to end.
    func takePathLease(_ token: Secret) async throws -> Lease {
        let started = now()
        while true {
            let lease = try await takeLease(at: leasePath, token, started: started)
            var waited = false
            do {
                while let (name, holder) = try await heldAccountLease(token, after: lease.index) {
                    try await waitedTooLong(since: started, for: holder, at: accountLeasesPath + "/" + name)
                    waited = true
                }
                guard waited else { return lease }
                // The wait may have outlasted the lease's own deadline: write it again while it is
                // still this one, or start over.
                return try await write(lease: lease.path, replacing: lease.version, token: token, index: lease.index)
            } catch OpenBaoError.versionChanged {
                continue
            } catch {
                await release(lease, token: token)
                throw error
            }
        }
    }

    /// One account lease held now, if any (read as of `index`).
    func heldAccountLease(_ token: Secret, after index: StorageIndex) async throws -> (String, Holder)? {
        let names = try await secretNames(under: accountLeasesPath, token: token, after: index)
        let holders = try await Self.concurrently(names) { name in
            let path = self.accountLeasesPath + "/" + name
            return try self.holder(
                of: try await self.client.read(mount: self.settings.mount, path: path, token: token, after: index), at: path)
        }
        return zip(names, holders).first { $0.1 != nil }.map { ($0.0, $0.1!) }
    }

    /// Takes the lease at `path`: written with check-and-set when it is free, released or
    /// expired; a live one is waited for, up to `leaseWait` from `started`.
    func takeLease(at path: String, _ token: Secret, started: Date) async throws -> Lease {
        while true {
            let current = try await client.read(mount: settings.mount, path: path, token: token)
            if let holder = try holder(of: current, at: path) {
                try await waitedTooLong(since: started, for: holder, at: path)
                continue
            }
            do {
                return try await write(lease: path, replacing: current?.version ?? 0, token: token, index: StorageIndex())
            } catch {
                // Another machine wrote the lease between the read and this write: read it again.
                guard case .versionChanged = error else { throw error }
            }
        }
    }

    /// Writes this process's lease at `path` with a deadline `leaseDuration` from now.
    func write(lease path: String, replacing version: Int, token: Secret, index: StorageIndex) async throws(OpenBaoError) -> Lease {
        let deadline = String(Int((now().timeIntervalSince1970 + leaseDuration).rounded(.up)))
        let written = try await client.write(
            [Self.marker: Kind.lease.rawValue, "owner": owner, "deadline": deadline], mount: settings.mount, path: path,
            replacing: version, token: token, after: index)
        return Lease(path: path, version: written, index: index)
    }

    /// Who holds the lease `secret` (read at `path`) now; `nil` when it is free, released,
    /// expired or beyond reach (`LeaseState`). A secret there that is not a lease is not Latchkey's.
    func holder(of secret: KVSecret?, at path: String) throws -> Holder? {
        guard case .held(let holder) = try leaseState(of: secret, at: path) else { return nil }
        return holder
    }

    /// What a lease read at `path` is now.
    enum LeaseState {
        /// Never written, released (`owner` empty) or deleted.
        case free
        case held(Holder)
        case expired(Holder)
        /// A deadline that is no number, or further ahead than `leaseDuration` plus
        /// `clockSkewAllowance`: no Latchkey writes one, so it is taken over as if expired, and a
        /// teammate's write (or a clock far ahead) cannot block the path past one lease.
        case beyondReach(owner: String, deadline: String)
    }

    /// How far ahead of this machine's clock another's may run: a deadline up to `leaseDuration`
    /// plus this from now is waited for; one further ahead is not a lease any Latchkey took.
    public static let clockSkewAllowance: TimeInterval = 30

    func leaseState(of secret: KVSecret?, at path: String) throws -> LeaseState {
        guard let data = secret?.data else { return .free }
        guard data[Self.marker] == .string(Kind.lease.rawValue) else { throw OpenBaoError.notLatchkeys(path: full(path)) }
        guard case .string(let owner)? = data["owner"], !owner.isEmpty else { return .free }
        guard case .string(let text)? = data["deadline"], let seconds = Double(text), seconds.isFinite,
            seconds <= now().timeIntervalSince1970 + leaseDuration + Self.clockSkewAllowance
        else {
            let text: String = if case .string(let text)? = data["deadline"] { text } else { "(none)" }
            return .beyondReach(owner: owner, deadline: text)
        }
        let holder = Holder(owner: owner, deadline: Date(timeIntervalSince1970: seconds))
        return holder.deadline > now() ? .held(holder) : .expired(holder)
    }

    /// Pauses a random while before the next try, or fails once `leaseWait` has passed.
    func waitedTooLong(since started: Date, for holder: Holder, at path: String) async throws {
        guard now().timeIntervalSince(started) < leaseWait else {
            throw OpenBaoError.leaseHeld(path: full(path), owner: holder.owner, until: holder.deadline, waited: Int(leaseWait))
        }
        await pause(.milliseconds(Int.random(in: 50...250)))
    }

    /// Frees the lease if it is still the one taken; when that fails it expires at its deadline.
    func release(_ lease: Lease, token: Secret) async {
        try? await free(lease.path, version: lease.version, token: token, after: lease.index)
    }

    /// Writes the lease at `path` free (no owner), if it is still at `version`.
    func free(_ path: String, version: Int, token: Secret, after index: StorageIndex?) async throws(OpenBaoError) {
        _ = try await client.write(
            [Self.marker: Kind.lease.rawValue, "owner": "", "deadline": "0"], mount: settings.mount, path: path, replacing: version,
            token: token, after: index)
    }

    func underLease<T: Sendable>(_ token: Secret, _ work: @Sendable (Lease) async throws -> T) async throws -> T {
        let inProcess = AsyncLock.forPath(lockKey(leasePath))
        await inProcess.lock()
        defer { inProcess.unlock() }
        let lease = try await takePathLease(token)
        do {
            let result = try await work(lease)
            await release(lease, token: token)
            return result
        } catch {
            await release(lease, token: token)
            throw error
        }
    }

    /// Tasks of one process (the agent's) queue here before they ask OpenBao for the lease at
    /// `path`.
    private func lockKey(_ path: String) -> String { "openbao:" + full(path) }

    /// `read` of every one of `items`, eight at a time, in their order.
    static func concurrently<Item: Sendable, Value: Sendable>(
        _ items: [Item], _ read: @escaping @Sendable (Item) async throws -> Value
    ) async throws -> [Value] {
        try await withThrowingTaskGroup(of: (Int, Value).self) { group in
            var values: [Value?] = Array(repeating: nil, count: items.count)
            for (position, item) in items.enumerated() {
                if position >= 8, let (done, value) = try await group.next() { values[done] = value }
                group.addTask { (position, try await read(item)) }
            }
            for try await (done, value) in group { values[done] = value }
            return values.map { $0! }
        }
    }

    // MARK: - Helpers

    /// What marks a secret as Latchkey's, and which kind it is.
    static let marker = "latchkey"
    enum Kind: String { case account, removed, clients, lease }

    /// An account's secret name: a hash of its identity (provider, issuer, subject), which is
    /// an OpenBao name whatever the subject holds.
    static func name(of record: AccountRecord) -> String { name(of: record.identity) }

    static func name(of identity: AccountIdentity) -> String {
        SHA256.hash(data: Array("\(identity.provider)\n\(identity.issuer)\n\(identity.subject)".utf8)).hexadecimal
    }

    /// The order records are shown in: as they were signed in.
    static func ordered(_ records: [AccountRecord]) -> [AccountRecord] {
        records.sorted { ($0.createdAt, $0.provider, $0.subject) < ($1.createdAt, $1.provider, $1.subject) }
    }

    /// A change as written: the record, or a removal marker with its time (`removedAt`, Unix
    /// seconds), which a journaled record made before it never writes over.
    static func data(for change: OpenBaoJournal.Change) throws(OpenBaoError) -> [String: String] {
        guard let record = change.record else {
            return [marker: Kind.removed.rawValue, "removedAt": String(change.at.timeIntervalSince1970)]
        }
        return [marker: Kind.account.rawValue, "record": try json(record)]
    }

    static func json(_ value: some Encodable) throws(OpenBaoError) -> String {
        guard let data = try? encoder.encode(value) else {
            throw .malformedAnswer(action: "encoding a record", host: "this machine", problem: "it cannot be written as JSON")
        }
        return String(decoding: data, as: UTF8.self)
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    func full(_ path: String) -> String { settings.mount + "/" + path }

    func currentToken() async throws(OpenBaoError) -> Secret {
        if let token = token.withLock({ $0 }) { return token }
        let fresh = try await settings.token(environment: environment, client: client)
        token.withLock { $0 = fresh }
        return fresh
    }

    /// `work`'s errors as the keystore's: OpenBao's wrapped, the keystore's own as they are.
    static func typed<T>(_ work: () async throws -> T) async throws(KeystoreError) -> T {
        do {
            return try await work()
        } catch {
            throw keystoreError(error)
        }
    }

    /// `error` as the keystore says it: OpenBao's wrapped, the keystore's own as it is.
    static func keystoreError(_ error: any Error) -> KeystoreError {
        switch error {
        case let error as KeystoreError: return error
        case let error as OpenBaoError: return .openBao(error)
        default: return .io(path: "OpenBao", reason: String(describing: error))
        }
    }

    static func typed<T>(_ work: () throws(OpenBaoError) -> T) throws(KeystoreError) -> T {
        do {
            return try work()
        } catch {
            throw .openBao(error)
        }
    }
}

// MARK: - latchkey doctor

extension OpenBaoKeystore {
    /// Where the accounts are kept, what waits on this machine to be written there (a write back
    /// that failed after a provider answered: how many changes, of which accounts, since when,
    /// never a token), and the leases held on the path, with what each keeps waiting.
    public func findings(environment: [String: String]) async -> [Finding] {
        let addresses = settings.addresses.map(\.absoluteString).joined(separator: ", ")
        var findings = [Finding(.ok, "keystore", "openbao: \(settings.mount)/\(settings.path) at \(addresses)")]
        do throws(KeystoreError) {
            let entries = try journal.entries()
            if let oldest = entries.map(\.at).min() {
                let accounts = entries.map { entry in
                    entry.record.map { "\($0.provider):\($0.label)" } ?? "a sign-out of accounts/\(entry.name)"
                }
                findings.append(
                    Finding(
                        .warning, "openbao journal",
                        "\(journal.path) holds \(entries.count) change\(entries.count == 1 ? "" : "s") OpenBao has not taken yet (\(accounts.joined(separator: ", "))), the oldest from \(oldest.formatted(.iso8601)); the next command that reaches OpenBao writes them",
                        fix: "latchkey status (once OpenBao takes writes)"))
            }
        } catch {
            findings.append(Finding(.problem, "openbao journal", error.description))
        }
        do throws(KeystoreError) {
            for lease in try await leases() {
                let beyondReach = lease.state == .beyondReach
                findings.append(
                    Finding(
                        beyondReach ? .warning : .ok, "openbao lease", lease.description,
                        fix: beyondReach ? "latchkey keystore leases --clear \(lease.name)" : nil))
            }
        } catch {
            findings.append(Finding(.warning, "openbao leases", "cannot be read: \(error.description)"))
        }
        return findings
    }
}
