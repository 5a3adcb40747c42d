import Foundation
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeySupport
@testable import LatchkeyVault

/// A journal that loses nothing and holds only what recovery needs: every failed write back
/// kept (per account, the newest), written back with the rule of a live write, removals
/// included, and no access token or DPoP private key on disk.
@Suite("The openbao keystore's journal: merged under a lock, replayed by updatedAt, without access tokens or DPoP keys")
struct OpenBaoJournalTests {
    typealias Clock = OpenBaoKeystoreTests.Clock

    static func temporaryJournal() -> String { NSTemporaryDirectory() + "latchkey-openbao-\(UUID().uuidString)/openbao.journal" }

    /// What a refresh does to a record: new tokens, `updatedAt` now.
    static func refresh(_ record: inout AccountRecord?, clock: Clock, number: Int) {
        let subject = record?.subject ?? ""
        record?.accessToken = Secret("at-\(subject)-\(number)")
        record?.refreshToken = Secret("rt-\(subject)-\(number)")
        record?.expiresAt = clock.now + 3600
        record?.updatedAt = clock.now
    }

    @Test(
        "three refreshes of three accounts while OpenBao refuses writes each print their result, leave three changes, and all reach OpenBao later"
    )
    func threeRefreshesWhileRefused() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock, journal: Self.temporaryJournal())
        let accounts = ["alice", "bob", "carol"].map { OpenBaoKeystoreTests.record($0) }
        try await keystore.update { $0 = accounts }

        engine.state.withLock { $0.refuseWrites = "team/accounts/" }
        for account in accounts {
            let result = try await keystore.updateAccount(account.identity) { record -> String in
                Self.refresh(&record, clock: clock, number: 2)
                return "Refreshed"
            }
            #expect(result == "Refreshed")
            clock.advance(.seconds(1))
        }
        let entries = try keystore.journal.entries()
        #expect(entries.map { $0.record?.refreshToken } == accounts.map { Secret("rt-\($0.subject)-2") })

        engine.state.withLock { $0.refuseWrites = nil }
        let records = try await keystore.records()
        #expect(records.map(\.refreshToken) == accounts.map { Secret("rt-\($0.subject)-2") }, "every rotated refresh token reached OpenBao")
        #expect(!keystore.journal.isPending)
    }

    @Test("refreshes of eight accounts from eight tasks whose write backs fail at once all keep their change")
    func concurrentWriteBacks() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let journal = Self.temporaryJournal()
        let accounts = (0..<8).map { OpenBaoKeystoreTests.record("user\($0)") }
        try await OpenBaoKeystoreTests.keystore(engine, clock: clock, journal: journal).update { $0 = accounts }
        engine.state.withLock { $0.refuseWrites = "team/accounts/" }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for account in accounts {
                // A keystore each, as processes have; they share the journal's file and lock.
                let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock, journal: journal)
                group.addTask { try await keystore.updateAccount(account.identity) { Self.refresh(&$0, clock: clock, number: 2) } }
            }
            try await group.waitForAll()
        }
        let kept = try OpenBaoKeystoreTests.keystore(engine, clock: clock, journal: journal).journal.entries()
        #expect(Set(kept.compactMap { $0.record?.subject }) == Set(accounts.map(\.subject)))
    }

    @Test("changes of one account added from several tasks at once leave its newest: the latest refresh token")
    func newestChangePerAccount() async throws {
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(OpenBaoKVEngine(), clock: clock, journal: Self.temporaryJournal())
        let alice = OpenBaoKeystoreTests.record("alice")
        let name = OpenBaoKeystore.name(of: alice)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in (1...12).shuffled() {
                var record: AccountRecord? = alice
                Self.refresh(&record, clock: clock, number: number)
                record?.updatedAt = alice.updatedAt + Double(number)
                let entry = try #require(
                    OpenBaoJournal.Entry(.init(name: name, record: record, at: record!.updatedAt), proofKeyHeldByOpenBao: nil))
                group.addTask { try await keystore.journal.add([entry]) }
            }
            try await group.waitForAll()
        }
        #expect(try keystore.journal.entries().map { $0.record?.refreshToken } == [Secret("rt-alice-12")])
    }

    @Test("a journaled removal does not remove a record a teammate wrote after it")
    func removalOlderThanTheRecord() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock, journal: Self.temporaryJournal())
        let alice = OpenBaoKeystoreTests.record("alice")
        try await keystore.update { $0 = [alice] }

        engine.state.withLock { $0.refuseWrites = "team/accounts/" }
        try await keystore.update { $0.removeAll() }
        #expect(keystore.journal.isPending)
        #expect(try keystore.journal.entries().map(\.record) == [nil])

        // A teammate signs alice in again, later, once OpenBao takes writes.
        clock.advance(.seconds(30))
        engine.state.withLock { $0.refuseWrites = nil }
        let teammate = OpenBaoKeystoreTests.keystore(engine, clock: clock)
        try await teammate.updateAccount(alice.identity) { record in
            Self.refresh(&record, clock: clock, number: 9)
        }

        #expect(try await keystore.records().map(\.refreshToken) == [Secret("rt-alice-9")], "the teammate's record stayed")
        #expect(!keystore.journal.isPending)
    }

    @Test("a journaled removal from after the record OpenBao holds is written as a marker with its time")
    func removalNewerThanTheRecord() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock, journal: Self.temporaryJournal())
        try await keystore.update { $0 = [OpenBaoKeystoreTests.record("alice")] }
        engine.state.withLock { $0.refuseWrites = "team/accounts/" }
        try await keystore.update { $0.removeAll() }
        engine.state.withLock { $0.refuseWrites = nil }
        #expect(try await keystore.records() == [])
        let marker = engine.secret(OpenBaoKeystoreTests.name(OpenBaoKeystoreTests.record("alice")))?.data
        #expect(marker == ["latchkey": "removed", "removedAt": String(clock.now.timeIntervalSince1970)])
    }

    @Test(
        "the journal on disk holds the rotated refresh token but no access token, ID token or DPoP private key; they come back from OpenBao"
    )
    func holdsWhatRecoveryNeeds() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock, journal: Self.temporaryJournal())
        var alice = OpenBaoKeystoreTests.record("alice")
        alice.dpopKey = Secret("dpop-private-key-fake-0123456789")
        alice.idToken = Secret("id-token-fake-0123456789")
        try await keystore.update { $0 = [alice] }

        engine.state.withLock { $0.refuseWrites = "team/accounts/" }
        try await keystore.updateAccount(alice.identity) { record in
            Self.refresh(&record, clock: clock, number: 2)
            record?.idToken = Secret("id-token-fake-new-0123456789")
            record?.narrowedTokens = [
                NarrowedToken(
                    resource: "https://api.example", scopes: [], accessToken: Secret("narrowed-token-fake"), tokenType: "Bearer",
                    expiresAt: nil, issuedAt: clock.now)
            ]
        }
        let bytes = String(decoding: try #require(FileManager.default.contents(atPath: keystore.journal.path)), as: UTF8.self)
        #expect(bytes.contains("rt-alice-2"))
        for secret in ["at-alice-2", "dpop-private-key-fake", "id-token-fake", "narrowed-token-fake"] {
            #expect(!bytes.contains(secret), "\(secret) is not in the journal")
        }

        engine.state.withLock { $0.refuseWrites = nil }
        let written = try #require(try await keystore.record(alice.identity))
        #expect(written.refreshToken == Secret("rt-alice-2") && written.dpopKey == alice.dpopKey && written.idToken == alice.idToken)
        #expect(!written.isValid(at: clock.now, margin: 0), "refreshed before it is used: its access token was not kept")
    }

    @Test("a sign-in bound to a new DPoP key that OpenBao refuses is not journaled, and the command says so")
    func newProofKeyIsNotJournaled() async throws {
        let engine = OpenBaoKVEngine()
        let keystore = OpenBaoKeystoreTests.keystore(engine, journal: Self.temporaryJournal())
        engine.state.withLock { $0.refuseWrites = "team/accounts/" }
        var alice = OpenBaoKeystoreTests.record("alice")
        alice.dpopKey = Secret("dpop-private-key-fake-0123456789")
        await #expect {
            try await keystore.update { $0.append(alice) }
        } throws: { error in
            guard case .openBao(.newProofKeyNotKept(let paths, _))? = error as? KeystoreError else { return false }
            return paths == ["secret/" + OpenBaoKeystoreTests.name(alice)]
        }
        #expect(!keystore.journal.isPending)
    }

    @Test("doctor says how many changes wait, for which accounts and since when, and no token")
    func doctorSaysWhatWaits() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock, journal: Self.temporaryJournal())
        let accounts = ["alice", "bob"].map { OpenBaoKeystoreTests.record($0) }
        try await keystore.update { $0 = accounts }
        engine.state.withLock { $0.refuseWrites = "team/accounts/" }
        for account in accounts {
            try await keystore.updateAccount(account.identity) { Self.refresh(&$0, clock: clock, number: 2) }
        }
        let findings = await keystore.findings(environment: [:])
        let journal = try #require(findings.first { $0.subject == "openbao journal" })
        #expect(journal.found.contains("holds 2 changes OpenBao has not taken yet (a:alice, a:bob), the oldest from 2027-01-15T08:00:00Z"))
        #expect(!journal.found.contains("rt-"))
    }
}
