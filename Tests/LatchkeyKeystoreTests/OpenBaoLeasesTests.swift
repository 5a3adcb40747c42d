import Foundation
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeySupport
@testable import LatchkeyVault

/// Leases that end: a deadline no Latchkey writes is taken over, one within a lease and the
/// clock-skew allowance is waited for, and `latchkey keystore leases` lists and clears them.
@Suite("The openbao keystore's leases: deadlines beyond reach, listing and clearing")
struct OpenBaoLeasesTests {
    typealias Clock = OpenBaoKeystoreTests.Clock

    static func lease(_ owner: String, deadline: String) -> [String: String] {
        ["latchkey": "lease", "owner": owner, "deadline": deadline]
    }

    /// Deadlines no Latchkey writes: not a finite number, or further ahead than the lease (60 s)
    /// plus the clock-skew allowance (30 s). The clock is at 1_800_000_000.
    static let deadlinesBeyondReach = ["99999999999", "inf", "-inf", "nan", "soon", "", "1800000091", "1e300"]

    @Test("a path lease whose deadline is beyond reach is taken over at once", arguments: deadlinesBeyondReach)
    func pathLeaseBeyondReach(deadline: String) async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock)
        try await keystore.update { $0.append(OpenBaoKeystoreTests.record("alice")) }
        engine.put("team/lease", Self.lease("mallory host pid 6 m", deadline: deadline))
        let before = clock.now
        try await keystore.update { $0[0].accessToken = Secret("at-2") }
        #expect(clock.now == before, "nothing waited for it")
        #expect(try await keystore.records().map(\.accessToken) == [Secret("at-2")])
    }

    @Test(
        "an account lease whose deadline is beyond reach is taken over at once, and so is a negative one",
        arguments: deadlinesBeyondReach + ["-5"])
    func accountLeaseBeyondReach(deadline: String) async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock)
        let alice = OpenBaoKeystoreTests.record("alice")
        try await keystore.update { $0.append(alice) }
        engine.put("team/leases/" + OpenBaoKeystore.name(of: alice), Self.lease("mallory host pid 6 m", deadline: deadline))
        let before = clock.now
        try await keystore.updateAccount(alice.identity) { $0?.accessToken = Secret("at-2") }
        #expect(clock.now == before, "nothing waited for it")
        #expect(try await keystore.record(alice.identity)?.accessToken == Secret("at-2"))
    }

    @Test("a deadline within the lease and the clock-skew allowance (a clock up to 30 s ahead) is waited for")
    func deadlineWithinReachIsWaitedFor() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock)
        try await keystore.update { $0.append(OpenBaoKeystoreTests.record("alice")) }
        engine.put("team/lease", Self.lease("ahead host pid 7 a", deadline: "1800000089"))
        try await keystore.update { $0[0].accessToken = Secret("at-2") }
        #expect(clock.now.timeIntervalSince1970 >= 1_800_000_089, "waited until its deadline")
    }

    @Test("leases lists each held lease with its holder, time left and what it blocks; doctor too, warning of one beyond reach")
    func listing() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock)
        let alice = OpenBaoKeystoreTests.record("alice")
        try await keystore.update { $0.append(alice) }
        #expect(try await keystore.leases() == [], "released leases are not listed")

        let accountLease = "leases/" + OpenBaoKeystore.name(of: alice)
        engine.put("team/lease", Self.lease("mallory host pid 6 m", deadline: "99999999999"))
        engine.put("team/" + accountLease, Self.lease("busy host pid 8 b", deadline: "1800000040"))
        let leases = try await keystore.leases()
        #expect(leases.map(\.name) == ["lease", accountLease])
        #expect(leases[0].owner == "mallory host pid 6 m" && leases[0].state == .beyondReach)
        #expect(leases[0].description.contains("no Latchkey waits for it") && leases[0].description.contains("blocks nothing"))
        #expect(leases[1].state == .held(secondsLeft: 40))
        #expect(leases[1].description.contains("blocks refreshes of a:alice, and sign-in, sign-out and `default` of every account"))

        let findings = await keystore.findings(environment: [:])
        let warning = try #require(findings.first { $0.subject == "openbao lease" && $0.severity == .warning })
        #expect(warning.fix == "latchkey keystore leases --clear lease")
        #expect(findings.contains { $0.subject == "openbao lease" && $0.severity == .ok && $0.found.hasPrefix(accountLease) })
    }

    @Test("clearing frees a lease beyond reach or expired with check-and-set, and refuses a live one, an unknown name, and a 403")
    func clearing() async throws {
        let engine = OpenBaoKVEngine()
        let clock = Clock()
        let keystore = OpenBaoKeystoreTests.keystore(engine, clock: clock)
        engine.put("team/lease", Self.lease("mallory host pid 6 m", deadline: "inf"))
        let cleared = try await keystore.clearLease("lease")
        #expect(cleared.owner == "mallory host pid 6 m")
        let freed = try #require(engine.secret("team/lease"))
        #expect(freed.version == 2 && freed.data?["owner"] == "")

        engine.put("team/lease", Self.lease("busy host pid 8 b", deadline: "1800000030"))
        await #expect(throws: KeystoreError.openBao(.leaseLive(path: "secret/team/lease", owner: "busy host pid 8 b", secondsLeft: 30))) {
            try await keystore.clearLease("lease")
        }
        #expect(engine.secret("team/lease")?.data?["owner"] == "busy host pid 8 b")
        clock.advance(.seconds(31))
        _ = try await keystore.clearLease("lease")

        await #expect(throws: KeystoreError.openBao(.unknownLease(name: "lease", path: "secret/team"))) {
            try await keystore.clearLease("lease")
        }
        await #expect(throws: KeystoreError.openBao(.unknownLease(name: "accounts/x", path: "secret/team"))) {
            try await keystore.clearLease("accounts/x")
        }

        engine.put("team/lease", Self.lease("mallory host pid 6 m", deadline: "nan"))
        engine.state.withLock { $0.refuseWrites = "team/lease" }
        await #expect {
            try await keystore.clearLease("lease")
        } throws: { error in
            guard case .openBao(.leaseNotCleared(let path, _))? = error as? KeystoreError else { return false }
            return path == "secret/team/lease" && (error as! KeystoreError).description.contains("policy does not allow writing it")
        }
    }
}
