import Foundation
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyProviders
@testable import LatchkeySupport
@testable import LatchkeyVault

/// The `openbao` keystore's lease and write back, against a KV version 2 engine that answers as
/// OpenBao does (the answers of OpenBaoKVTests: versions, check-and-set refused in words, 404
/// with an empty errors list, `?list=true`).
@Suite("The openbao keystore: the lease, check-and-set write back and the journal")
struct OpenBaoKeystoreTests {
    /// A clock the tests move; pauses move it too, so waiting for a lease takes no real time.
    final class Clock: Sendable {
        let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { time.withLock { $0 } }
        func advance(_ duration: Duration) {
            time.withLock { $0 += Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18 }
        }
    }

    static func keystore(_ engine: OpenBaoKVEngine, clock: Clock = Clock(), journal: String? = nil) -> OpenBaoKeystore {
        OpenBaoKeystore(
            settings: OpenBaoSettings(addresses: [URL(string: "http://127.0.0.1:8200")!], path: "team"), transport: engine,
            environment: ["BAO_TOKEN": "s.keystoretest"],
            journalPath: journal ?? NSTemporaryDirectory() + "latchkey-openbao-\(UUID().uuidString)/openbao.journal",
            leaseDuration: 60, leaseWait: 90, now: { clock.now }, pause: { clock.advance($0) })
    }

    static func record(_ subject: String, token: String = "at-1", refresh: String = "rt-1") -> AccountRecord {
        AccountRecord(
            provider: "a", issuer: "https://idp.test.example", subject: subject, displayName: nil, accessToken: Secret(token),
            tokenType: "Bearer", refreshToken: Secret(refresh), idToken: nil, expiresAt: nil, scopes: [],
            createdAt: Date(timeIntervalSince1970: 1_700_000_000), updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    static func name(_ record: AccountRecord) -> String { "team/accounts/" + OpenBaoKeystore.name(of: record) }

    @Test("update takes the lease, reads, runs the body, writes back with check-and-set on the version read, and frees the lease")
    func updateOrder() async throws {
        let engine = OpenBaoKVEngine()
        let keystore = Self.keystore(engine)
        try await keystore.update { $0.append(Self.record("alice")) }
        try await keystore.update { $0[0].accessToken = Secret("at-2") }
        let requests = engine.requests.filter { !$0.contains("?list=true") }
        #expect(
            requests.suffix(5) == [
                "GET /v1/secret/data/team/lease", "POST /v1/secret/data/team/lease",
                "GET /v1/secret/data/\(Self.name(Self.record("alice")))",
                "POST /v1/secret/data/\(Self.name(Self.record("alice")))", "POST /v1/secret/data/team/lease",
            ])
        let stored = try #require(engine.secret(Self.name(Self.record("alice"))))
        #expect(stored.version == 2 && stored.data?["latchkey"] == "account")
        #expect(try await keystore.records().map(\.accessToken) == [Secret("at-2")])
        let lease = try #require(engine.secret("team/lease"))
        #expect(lease.data?["owner"] == "" && lease.version == 4, "taken and freed twice")
    }

    @Test("a live lease is waited for and the body then sees what its holder wrote; an expired one is taken over")
    func waitsForALiveLease() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = Self.keystore(engine, clock: clock)
        try await keystore.update { $0.append(Self.record("alice")) }
        engine.put(
            "team/lease",
            ["latchkey": "lease", "owner": "other host pid 1 x", "deadline": String(Int(clock.now.timeIntervalSince1970) + 30)])
        let seen = try await keystore.update { records in records.map(\.subject) }
        #expect(seen == ["alice"])
        #expect(clock.now.timeIntervalSince1970 >= 1_800_000_030, "waited until the other lease's deadline")

        // A holder killed mid-refresh: its lease is taken over at once after its deadline.
        engine.put(
            "team/lease", ["latchkey": "lease", "owner": "dead host pid 2 y", "deadline": String(Int(clock.now.timeIntervalSince1970) - 1)])
        let before = clock.now
        try await keystore.update { _ in }
        #expect(clock.now == before)
    }

    @Test(
        "updateAccount takes that account's lease, reads and writes its one secret, checks the path's lease after its own write, and frees its lease"
    )
    func updateAccountOrder() async throws {
        let engine = OpenBaoKVEngine()
        let keystore = Self.keystore(engine)
        let alice = Self.record("alice")
        try await keystore.update { $0 = [alice, Self.record("bob")] }
        let before = engine.requests.count
        try await keystore.updateAccount(alice.identity) { $0?.accessToken = Secret("at-2") }
        let lease = "team/leases/" + OpenBaoKeystore.name(of: alice)
        #expect(
            Array(engine.requests[before...]) == [
                "GET /v1/secret/data/\(lease)", "POST /v1/secret/data/\(lease)", "GET /v1/secret/data/team/lease",
                "GET /v1/secret/data/\(Self.name(alice))", "POST /v1/secret/data/\(Self.name(alice))", "POST /v1/secret/data/\(lease)",
            ], "no other account is read, and the path's lease is only read")
        #expect(
            engine.state.withLock { $0.forwarded }.contains("/v1/secret/data/team/lease"), "read after its own write, at the active node")
        #expect(engine.secret(lease)?.data?["owner"] == "" && engine.secret("team/lease")?.version == 2)
        #expect(try await keystore.record(alice.identity)?.accessToken == Secret("at-2"))
        #expect(try await keystore.record(Self.record("carol").identity) == nil)
    }

    @Test("refreshes of different accounts do not wait for each other; one of the same account waits for its lease")
    func accountLeasesAreIndependent() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = Self.keystore(engine, clock: clock)
        let (alice, bob) = (Self.record("alice"), Self.record("bob"))
        try await keystore.update { $0 = [alice, bob] }
        let deadline = String(Int(clock.now.timeIntervalSince1970) + 30)
        engine.put(
            "team/leases/" + OpenBaoKeystore.name(of: alice), ["latchkey": "lease", "owner": "other host pid 1 x", "deadline": deadline])
        let start = clock.now
        try await keystore.updateAccount(bob.identity) { $0?.accessToken = Secret("at-bob") }
        #expect(clock.now == start, "bob's refresh did not wait for alice's lease")
        try await keystore.updateAccount(alice.identity) { $0?.accessToken = Secret("at-alice") }
        #expect(clock.now.timeIntervalSince1970 >= 1_800_000_030, "alice's waited until the other lease's deadline")
    }

    @Test(
        "an account lease gives way to a live path lease (given back while it waits); the path lease waits for account leases, then is written again"
    )
    func pathAndAccountLeasesExcludeEachOther() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = Self.keystore(engine, clock: clock)
        let alice = Self.record("alice")
        try await keystore.update { $0 = [alice] }
        let accountLease = "team/leases/" + OpenBaoKeystore.name(of: alice)

        engine.put(
            "team/lease",
            ["latchkey": "lease", "owner": "other host pid 1 x", "deadline": String(Int(clock.now.timeIntervalSince1970) + 30)])
        let ownerWhileWaiting = Mutex<[String?]>([])
        let probe = OpenBaoKeystore(
            settings: keystore.settings, transport: engine, environment: ["BAO_TOKEN": "s.keystoretest"],
            journalPath: NSTemporaryDirectory() + "latchkey-openbao-\(UUID().uuidString)/openbao.journal", leaseDuration: 60, leaseWait: 90,
            now: { clock.now },
            pause: { duration in
                ownerWhileWaiting.withLock { $0.append(engine.secret(accountLease)?.data?["owner"]) }
                clock.advance(duration)
            })
        try await probe.updateAccount(alice.identity) { $0?.accessToken = Secret("at-2") }
        #expect(clock.now.timeIntervalSince1970 >= 1_800_000_030, "it waited for the path lease's deadline")
        #expect(
            !ownerWhileWaiting.withLock { $0 }.isEmpty && ownerWhileWaiting.withLock { $0 }.allSatisfy { $0 == "" },
            "its own lease was free while it waited")

        let waitedFrom = clock.now
        engine.put(
            accountLease,
            ["latchkey": "lease", "owner": "other host pid 2 y", "deadline": String(Int(clock.now.timeIntervalSince1970) + 20)])
        let pathVersion = try #require(engine.secret("team/lease")).version
        let seen = try await keystore.update { records in records.map(\.accessToken) }
        #expect(seen == [Secret("at-2")])
        // The deadline is in whole seconds, 20 after the clock's second (its fraction may be past).
        #expect(clock.now.timeIntervalSince(waitedFrom) >= 19, "the path lease waited for the account lease to end")
        #expect(try #require(engine.secret("team/lease")).version == pathVersion + 3, "taken, written again after the wait, freed")
    }

    @Test("a lease held longer than the wait fails naming OpenBao and the lease, and the body never runs")
    func leaseHeldTooLong() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        // A holder that takes the lease again and again, each time for a lease's length.
        let renew: @Sendable () -> Void = {
            engine.put(
                "team/lease",
                ["latchkey": "lease", "owner": "stuck host pid 3 z", "deadline": String(Int(clock.now.timeIntervalSince1970) + 60)])
        }
        renew()
        let keystore = OpenBaoKeystore(
            settings: OpenBaoSettings(addresses: [URL(string: "http://127.0.0.1:8200")!], path: "team"), transport: engine,
            environment: ["BAO_TOKEN": "s.keystoretest"],
            journalPath: NSTemporaryDirectory() + "latchkey-openbao-\(UUID().uuidString)/openbao.journal", leaseDuration: 60, leaseWait: 90,
            now: { clock.now },
            pause: { duration in
                clock.advance(duration)
                renew()
            })
        let ran = Mutex(false)
        await #expect {
            try await keystore.update { _ in ran.withLock { $0 = true } }
        } throws: { error in
            guard case .openBao(.leaseHeld(let path, let owner, _, let waited))? = error as? KeystoreError else { return false }
            return path == "secret/team/lease" && owner == "stuck host pid 3 z" && waited == 90
                && (error as! KeystoreError).description.contains("another Latchkey (stuck host pid 3 z) held the OpenBao lease")
        }
        #expect(!ran.withLock { $0 })
    }

    @Test("OpenBao unreachable: no body runs (no refresh starts) and the error names the address")
    func unreachable() async throws {
        let engine = OpenBaoKVEngine()
        engine.state.withLock { $0.down = true }
        let ran = Mutex(false)
        await #expect {
            try await Self.keystore(engine).update { _ in ran.withLock { $0 = true } }
        } throws: { error in
            (error as? KeystoreError)?.description.hasPrefix("cannot reach OpenBao at 127.0.0.1:8200: ") == true
        }
        #expect(!ran.withLock { $0 })
    }

    @Test("a write back OpenBao refuses keeps the new records in a 0600 journal, written before the next body runs")
    func journal() async throws {
        let engine = OpenBaoKVEngine()
        let directory = NSTemporaryDirectory() + "latchkey-openbao-\(UUID().uuidString)"
        let keystore = Self.keystore(engine, journal: directory + "/openbao.journal")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await keystore.update { $0.append(Self.record("alice")) }

        engine.state.withLock { $0.refuseWrites = "team/accounts/" }
        let refreshed = try await keystore.update { records -> String in
            records[0].refreshToken = Secret("rt-2")
            records[0].updatedAt += 60
            return "the provider answered"
        }
        #expect(refreshed == "the provider answered")
        #expect(keystore.journal.isPending)
        let mode = try FileManager.default.attributesOfItem(atPath: keystore.journal.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(engine.secret(Self.name(Self.record("alice")))?.version == 1, "OpenBao still has the old tokens")

        engine.state.withLock { $0.refuseWrites = nil }
        let seen = try await keystore.update { records in records[0].refreshToken }
        #expect(seen == Secret("rt-2"), "the body ran on the journal's tokens")
        #expect(!keystore.journal.isPending)
        #expect(engine.secret(Self.name(Self.record("alice")))?.version == 2)
    }

    @Test("a secret that is not Latchkey's, at the lease or among the accounts, is refused and not written over")
    func notLatchkeys() async throws {
        let engine = OpenBaoKVEngine()
        engine.put("team/lease", ["owner": "ops"])
        let ran = Mutex(false)
        await #expect(throws: KeystoreError.openBao(.notLatchkeys(path: "secret/team/lease"))) {
            try await Self.keystore(engine).update { _ in ran.withLock { $0 = true } }
        }
        #expect(!ran.withLock { $0 } && engine.secret("team/lease")?.version == 1)

        let other = OpenBaoKVEngine()
        other.put("team/accounts/database", ["password": "hunter2"])
        await #expect(throws: KeystoreError.openBao(.notLatchkeys(path: "secret/team/accounts/database"))) {
            try await Self.keystore(other).records()
        }
        #expect(other.secret("team/accounts/database")?.version == 1)
    }

    @Test(
        "reads under the lease carry the lease write's X-Vault-Index, so a standby's lagging copy never hands the body a refresh token another machine rotated"
    )
    func readsUnderTheLeaseSeeTheLastHoldersWrites() async throws {
        let engine = OpenBaoKVEngine()
        let here = Self.keystore(engine)
        try await here.update { $0.append(Self.record("alice", refresh: "rt-1")) }
        // The standby stops applying here; the other machine then refreshes through the active node.
        engine.state.withLock { $0.standby = $0.secrets }
        let other = Self.keystore(engine)
        try await other.update { records in
            records[0].refreshToken = Secret("rt-2")
            records[0].updatedAt += 60
        }
        let seen = try await here.update { records in records[0].refreshToken }
        #expect(seen == Secret("rt-2"), "the body saw what the lease's last holder wrote, not the standby's copy")
        let forwarded = engine.state.withLock { $0.forwarded }
        #expect(
            forwarded.contains("/v1/secret/metadata/team/accounts")
                && forwarded.contains("/v1/secret/data/\(Self.name(Self.record("alice")))"))
    }

    @Test("a removed account becomes a marker written with check-and-set, and is no longer listed")
    func removal() async throws {
        let engine = OpenBaoKVEngine()
        let keystore = Self.keystore(engine)
        try await keystore.update { $0 += [Self.record("alice"), Self.record("bob")] }
        try await keystore.update { $0.removeAll { $0.subject == "alice" } }
        #expect(try await keystore.records().map(\.subject) == ["bob"])
        #expect(engine.secret(Self.name(Self.record("alice")))?.data?["latchkey"] == "removed")
    }
}
