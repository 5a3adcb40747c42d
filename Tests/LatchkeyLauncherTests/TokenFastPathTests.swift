import Foundation
import LatchkeyEssentials
import Testing

@testable import LatchkeyDoctor
@testable import LatchkeyKeystore
@testable import LatchkeyLauncher
@testable import LatchkeyVault

/// The token copies as the full command writes them (`TokenCopies`), read as the launcher reads
/// them (`TokenFastPath`), in the real kernel keyring.
@Suite(
    "The launcher answers a token copy exactly when the full command would", .serialized,
    .enabled(if: Diagnosis.Probes.live.kernelKeyring() == nil))
struct TokenFastPathTests {
    static func record(subject: String = "1001", name: String? = "alice", issued: Date, lifetime: TimeInterval?) -> AccountRecord {
        AccountRecord(
            provider: "p", issuer: "https://issuer.example", subject: subject, displayName: name,
            accessToken: Secret("fake-access-\(subject)"), tokenType: "Bearer", refreshToken: nil, idToken: nil,
            expiresAt: lifetime.map { issued.addingTimeInterval($0) }, scopes: [], createdAt: issued, updatedAt: issued)
    }

    /// The fingerprint of provider p's policy files the copies are made under (`PolicyFiles`).
    static let policy = "config-identity|provider-file-identity"
    static let policies = ["p": policy]

    /// Now, on a whole second, as the launcher's `time(nil)` sees it.
    static func now() -> Date { Date(timeIntervalSince1970: TimeInterval(time(nil))) }

    /// A vault the copies' check accepts; its contents are never read on this path.
    static func vault(in scratch: Scratch) throws -> String { try scratch.file("data/vault", "sealed records") }

    /// A vault the copies' check accepts, its copies (dropped afterwards) and the time now.
    static func withCopies(_ body: (_ vault: String, _ copies: TokenCopies, _ now: Date) throws -> Void) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let vault = try Self.vault(in: scratch)
        let copies = TokenCopies(vaultPath: vault)
        defer { copies.drop() }
        try body(vault, copies, Self.now())
    }

    @Test("a copy is answered exactly when AccountRecord.isValid holds, the half-lifetime cap included")
    func sameRuleAsTheRecord() throws {
        try Self.withCopies { vault, copies, now in
            let record = Self.record(issued: now, lifetime: 60)
            copies.sync(
                [record], withholding: [], policies: Self.policies, unlockedUntil: now.addingTimeInterval(600), vaultFile: nil, now: now)
            let seconds = Int(now.timeIntervalSince1970)
            for elapsed in [0, 1, 29, 30, 31, 59, 60, 61] {
                for margin in [0, 1, 29, 30, 59, 60, 120, Int.max] {
                    let answer = TokenFastPath.token(
                        selector: "p", minimumLifetime: margin, origin: .vault(vault), policy: Self.policy, now: seconds + elapsed)
                    let expected = record.isValid(at: now.addingTimeInterval(TimeInterval(elapsed)), margin: TimeInterval(margin))
                    #expect((answer != nil) == expected, "elapsed \(elapsed), margin \(margin)")
                    if let answer { #expect(answer.token == Array("fake-access-1001".utf8) && !answer.proofBound) }
                }
            }
            // The case the copies used to refuse: 59 s left of a 60-second token, --min-ttl 60.
            #expect(
                TokenFastPath.token(selector: "p:alice", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds + 1)
                    != nil)
        }
    }

    @Test("the openbao keystore's copies need no vault file, and are not answered past a journal the full command refuses")
    func openBaoOrigin() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let journal = try scratch.directory("data") + "/openbao.journal"
        let copies = TokenCopies(vaultPath: journal)
        defer { copies.drop() }
        let now = Self.now()
        copies.sync(
            [Self.record(issued: now, lifetime: 3600)], withholding: [], policies: Self.policies,
            unlockedUntil: now.addingTimeInterval(600), vaultFile: nil, now: now)
        func answered() -> Bool {
            TokenFastPath.token(
                selector: "p", minimumLifetime: 60, origin: .openBao(journal: journal), policy: Self.policy,
                now: Int(now.timeIntervalSince1970)) != nil
        }
        #expect(answered(), "no journal: nothing for the full command to refuse")
        #expect(
            TokenFastPath.token(
                selector: "p", minimumLifetime: 60, origin: .vault(journal), policy: Self.policy, now: Int(now.timeIntervalSince1970))
                == nil,
            "as the vault's, they would need a vault file")
        _ = try scratch.file("data/openbao.journal", "{}")
        #expect(answered(), "a journal waiting to be written, private")
        #expect(chmod(journal, 0o644) == 0)
        #expect(!answered(), "a journal others can read")
    }

    @Test("a token without an expiry is answered for any minimum lifetime, as the vault answers it")
    func noExpiry() throws {
        try Self.withCopies { vault, copies, now in
            copies.sync(
                [Self.record(issued: now, lifetime: nil)], withholding: [], policies: Self.policies,
                unlockedUntil: now.addingTimeInterval(600), vaultFile: nil,
                now: now
            )
            let answer = TokenFastPath.token(
                selector: "p:1001", minimumLifetime: .max, origin: .vault(vault), policy: Self.policy, now: Int(now.timeIntervalSince1970))
            #expect(answer?.token == Array("fake-access-1001".utf8))
        }
    }

    @Test("a confirm = true account gets no copy and is named among the withheld; the others are copied")
    func withheld() throws {
        try Self.withCopies { vault, copies, now in
            let until = now.addingTimeInterval(600)
            let records = [
                Self.record(issued: now, lifetime: 3_600), Self.record(subject: "1002", name: "bob", issued: now, lifetime: 3_600),
            ]
            let file = Array("sealed records".utf8)
            copies.sync(records, withholding: [1], policies: Self.policies, unlockedUntil: until, vaultFile: file, now: now)
            let seconds = Int(now.timeIntervalSince1970)
            #expect(
                TokenFastPath.token(selector: "p:alice", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds)
                    != nil)
            for selector in ["p:bob", "p:1002"] {
                #expect(
                    TokenFastPath.token(selector: selector, minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds)
                        == nil, "\(selector)")
            }
            let listed = try #require(WithheldAccounts.current(vaultPath: vault))
            #expect(listed.contains(records[1]) && !listed.contains(records[0]))

            // Marked in config.toml or a provider file after the copies were made: the same vault
            // file, yet the copies are made anew.
            copies.sync(records, withholding: [0, 1], policies: Self.policies, unlockedUntil: until, vaultFile: file, now: now)
            #expect(
                TokenFastPath.token(selector: "p:alice", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds)
                    == nil)
            #expect(WithheldAccounts.current(vaultPath: vault)?.contains(records[0]) == true)
        }
    }

    @Test("the withheld list outlives the copies' keyring, speaks only of the accounts it judged, and goes with drop")
    func withheldListOutlivesTheCopies() throws {
        try Self.withCopies { vault, copies, now in
            let records = [
                Self.record(issued: now, lifetime: 3_600), Self.record(subject: "1002", name: "bob", issued: now, lifetime: 3_600),
            ]
            let file = Array("sealed records".utf8)
            let until = now.addingTimeInterval(600)
            copies.sync(records, withholding: [1], policies: Self.policies, unlockedUntil: until, vaultFile: file, now: now)
            // As the kernel or `keyctl invalidate` drops the copies: the launcher's vault answer
            // still knows bob is withheld, and alice is not.
            #expect(KernelKeyring.removeKeyring(description: TokenCopy.keyringDescription(vaultPath: vault)))
            let listed = try #require(WithheldAccounts.current(vaultPath: vault))
            #expect(listed.judged(records) && listed.contains(records[1]) && !listed.contains(records[0]))
            #expect(listed.policy(of: "p") == Self.policy)
            // An account the list never judged (added by a write that could not rewrite it).
            let added = records + [Self.record(subject: "1003", name: "carol", issued: now, lifetime: 3_600)]
            #expect(!listed.judged(added) && !listed.judged([records[0]]))
            #expect(listed.judged(records.reversed()), "the vault's order does not matter")

            // The same vault file read again: the copies come back, the list is the same.
            copies.sync(records, withholding: [1], policies: Self.policies, unlockedUntil: until, vaultFile: file, now: now)
            #expect(
                TokenFastPath.token(
                    selector: "p:alice", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy,
                    now: Int(now.timeIntervalSince1970))
                    != nil)
            copies.drop()
            #expect(WithheldAccounts.current(vaultPath: vault) == nil)
        }
    }

    @Test("a copy made under policy files other than the ones there now is not answered, nor one of a provider without a fingerprint")
    func policyFiles() throws {
        try Self.withCopies { vault, copies, now in
            let records = [Self.record(issued: now, lifetime: 3_600)]
            copies.sync(
                records, withholding: [], policies: Self.policies, unlockedUntil: now.addingTimeInterval(600), vaultFile: nil, now: now)
            let seconds = Int(now.timeIntervalSince1970)
            #expect(
                TokenFastPath.token(selector: "p", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds) != nil)
            // A provider file or config.toml edited since (`confirm = true` added in place).
            #expect(
                TokenFastPath.token(selector: "p", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy + "x", now: seconds)
                    == nil)
            #expect(WithheldAccounts.current(vaultPath: vault)?.policy(of: "p") == Self.policy)

            // Files that changed while they were read give no fingerprint, and no copy is made.
            copies.sync(records, withholding: [], policies: [:], unlockedUntil: now.addingTimeInterval(600), vaultFile: nil, now: now)
            #expect(
                TokenFastPath.token(selector: "p", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds) == nil)
        }
    }

    @Test("a selector the full command reads as another spelling is found under that spelling")
    func canonicalSpelling() throws {
        try Self.withCopies { vault, copies, now in
            copies.sync(
                [Self.record(issued: now, lifetime: 3_600)], withholding: [], policies: Self.policies,
                unlockedUntil: now.addingTimeInterval(600), vaultFile: nil,
                now: now)
            let selector = AccountSelector(parsing: "p:").description
            #expect(
                TokenFastPath.token(
                    selector: selector, minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: Int(now.timeIntervalSince1970)
                )
                    != nil)
        }
    }

    @Test("a copy in the older format is never answered, and the full command writes it anew though the vault did not change")
    func olderFormat() throws {
        try Self.withCopies { vault, copies, now in
            let until = now.addingTimeInterval(600)
            let file = Array("sealed records".utf8)
            let records = [Self.record(issued: now, lifetime: 3_600)]
            copies.sync(records, withholding: [], policies: Self.policies, unlockedUntil: until, vaultFile: file, now: now)
            let seconds = Int(now.timeIntervalSince1970)
            #expect(
                TokenFastPath.token(selector: "p", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds) != nil)

            // What the previous Latchkey left for the same file and unlock: payload 0x00 (expiry
            // only) and a marker without the format byte.
            let ring = try #require(KernelKeyring.keyring(description: TokenCopy.keyringDescription(vaultPath: vault)))
            let expiry = UInt64(seconds + 3_600)
            let old =
                [UInt8(0)] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: expiry >> (UInt64($0) * 8)) } + Array("old-token".utf8)
            try KernelKeyring.store(
                old, description: TokenCopy.accountKeyDescription(vaultPath: vault, account: "0"), timeout: 600, in: ring)
            let marker = TokenCopies.marker(
                vaultFile: file, withheld: WithheldAccounts(records, withholding: [], policies: Self.policies).payload, unlockedUntil: until
            )
            try KernelKeyring.store(
                Array(marker.dropLast()), description: TokenCopy.markerKeyDescription(vaultPath: vault), timeout: 600, in: ring)
            #expect(
                TokenFastPath.token(selector: "p", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds) == nil)

            copies.sync(records, withholding: [], policies: Self.policies, unlockedUntil: until, vaultFile: file, now: now)
            #expect(
                TokenFastPath.token(selector: "p", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds)?.token
                    == Array("fake-access-1001".utf8))
        }
    }

    @Test("no copy is answered while the vault is not one the full command would open")
    func unsafeVault() throws {
        let attacks: [(String, (String) throws -> Void)] = [
            (
                "a FIFO",
                { path in
                    unlink(path); mkfifo(path, 0o600)
                }
            ),
            (
                "a symbolic link",
                { path in
                    let target = path + ".real"
                    rename(path, target)
                    symlink(target, path)
                }
            ),
            ("group-readable", { path in chmod(path, 0o640) }),
            ("in a directory others can write", { path in chmod(VaultFile.directory(of: path), 0o777) }),
            ("a 100 GB sparse file", { path in truncate(path, 100 << 30) }),
            (
                "a directory",
                { path in
                    unlink(path); mkdir(path, 0o700)
                }
            ),
            ("missing", { path in unlink(path) }),
        ]
        for (what, attack) in attacks {
            try Self.withCopies { vault, copies, now in
                copies.sync(
                    [Self.record(issued: now, lifetime: 3_600)], withholding: [], policies: Self.policies,
                    unlockedUntil: now.addingTimeInterval(600),
                    vaultFile: nil,
                    now: now)
                let seconds = Int(now.timeIntervalSince1970)
                #expect(
                    TokenFastPath.token(selector: "p", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds)
                        != nil,
                    "before: \(what)")
                try attack(vault)
                #expect(
                    TokenFastPath.token(selector: "p", minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds)
                        == nil,
                    "\(what)")
            }
        }
    }
}

extension TokenFastPathTests {
    @Test("a DPoP-bound token's copy says it is bound, so mcp headers is never answered with it as a bearer token")
    func boundCopiesSayTheyAreBound() throws {
        try Self.withCopies { vault, copies, now in
            var bound = Self.record(issued: now, lifetime: 3600)
            bound.tokenType = "DPoP"
            let plain = Self.record(subject: "1002", name: "bob", issued: now, lifetime: 3600)
            copies.sync(
                [bound, plain], withholding: [], policies: Self.policies, unlockedUntil: now.addingTimeInterval(600), vaultFile: nil,
                now: now)
            let seconds = Int(now.timeIntervalSince1970)
            let answer = { (selector: String) in
                TokenFastPath.token(selector: selector, minimumLifetime: 60, origin: .vault(vault), policy: Self.policy, now: seconds)
            }
            #expect(answer("p:alice")?.proofBound == true)
            #expect(answer("p:bob")?.proofBound == false)
        }
    }

    @Test("the header is what the full command's JSON encoder prints, with a quote or backslash in a token escaped")
    func mcpHeaderJSON() {
        #expect(
            String(decoding: TokenFastPath.mcpHeader(Array("a.b-c_d~e+f/g=".utf8)), as: UTF8.self)
                == #"{"Authorization":"Bearer a.b-c_d~e+f/g="}"#)
        #expect(String(decoding: TokenFastPath.mcpHeader(Array(#"q"b\e"#.utf8)), as: UTF8.self) == #"{"Authorization":"Bearer q\"b\\e"}"#)
        #expect(String(decoding: TokenFastPath.mcpHeader([0x41, 0x0a]), as: UTF8.self) == #"{"Authorization":"Bearer A\u000a"}"#)
    }
}

@Suite("The launcher prints an answer the full command kept")
struct KeptAnswerTests {
    @Test("the answer is printed while it may be used and the policy files are as they were; never after, nor under others")
    func answeredOnlyWhileValid() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let vault = try TokenFastPathTests.vault(in: scratch)
        let ring = try KernelKeyring.replaceKeyring(description: TokenCopy.keyringDescription(vaultPath: vault), timeout: 60)
        defer { _ = KernelKeyring.removeKeyring(description: TokenCopy.keyringDescription(vaultPath: vault)) }
        let key = TokenCopy.awsAnswerKeyDescription(
            vaultPath: vault, selector: "p", options: AWSRoleOptions(roleARN: "arn:aws:iam::1:role/r"),
            environment: ["AWS_REGION": "eu-west-1"])
        let now = Int(time(nil))
        let text = Array("{\"Version\": 1}\n".utf8)
        try KernelKeyring.store(
            TokenCopy.encode(.answer(usableUntil: now + 30, policy: "files", text: text)), description: key, timeout: 60, in: ring)
        #expect(TokenFastPath.answer(key: key, origin: .vault(vault), policy: "files", now: now) == text)
        #expect(TokenFastPath.answer(key: key, origin: .vault(vault), policy: "files", now: now + 30) == nil, "past its use")
        #expect(TokenFastPath.answer(key: key, origin: .vault(vault), policy: "edited files", now: now) == nil, "policy files changed")
        #expect(TokenFastPath.answer(key: key, origin: .vault(vault), policy: nil, now: now) == nil, "policy files unreadable")
        let otherRegion = TokenCopy.awsAnswerKeyDescription(
            vaultPath: vault, selector: "p", options: AWSRoleOptions(roleARN: "arn:aws:iam::1:role/r"),
            environment: ["AWS_REGION": "us-east-1"])
        #expect(TokenFastPath.answer(key: otherRegion, origin: .vault(vault), policy: "files", now: now) == nil)
    }

    @Test("no option, variable or selector spelling can stand for another in the key; a variable set empty is one unset")
    func keysDoNotCollide() {
        let key = { (selector: String, options: AWSRoleOptions, environment: [String: String]) in
            TokenCopy.awsAnswerKeyDescription(vaultPath: "/v", selector: selector, options: options, environment: environment)
        }
        let keys = [
            key("p", AWSRoleOptions(roleARN: "a"), [:]), key("p", AWSRoleOptions(sessionName: "a"), [:]),
            key("p", AWSRoleOptions(roleARN: "a|1:b"), [:]), key("p", AWSRoleOptions(roleARN: "a", sessionName: "b"), [:]),
            key("p", AWSRoleOptions(roleARN: "a"), ["AWS_REGION": "a"]), key("p|1:a", AWSRoleOptions(), [:]),
            key("p", AWSRoleOptions(roleARN: "-"), [:]), key("p", AWSRoleOptions(duration: 900), [:]),
            key("p", AWSRoleOptions(stsEndpoint: "900"), [:]),
        ]
        #expect(Set(keys).count == keys.count)
        let unset = AWSRoleOptions.environment { _ in nil }
        let empty = AWSRoleOptions.environment { _ in "" }
        #expect(key("p", AWSRoleOptions(), unset) == key("p", AWSRoleOptions(), empty))
    }
}

@Suite("Token copy payloads")
struct TokenCopyTests {
    @Test("a token copy carries its issue time and expiry (or none) and round-trips")
    func roundTrip() {
        for entry: TokenCopy.Entry in [
            .token(issuedAt: 1_750_000_000, expiresAt: 1_750_003_600, token: Array("t".utf8), proofBound: false),
            .token(issuedAt: -5, expiresAt: nil, token: Array("tok".utf8), proofBound: false),
            .token(issuedAt: .min, expiresAt: .max - 1, token: [0], proofBound: false),
            .token(issuedAt: 1_750_000_000, expiresAt: 1_750_003_600, token: Array("bound".utf8), proofBound: true),
            .alias(of: "12", policy: "1:2:3:4:5:6:7|-|8:9:10:11:12:13:14"),
            .alias(of: "3", policy: ""),
            .answer(usableUntil: 1_750_003_300, policy: "1:2|-|3:4", text: Array("{\"Version\": 1}\n".utf8)),
        ] {
            #expect(TokenCopy.decode(TokenCopy.encode(entry)) == entry)
        }
    }

    @Test("an older payload, an unknown kind or a short one decodes to nothing")
    func refusedPayloads() {
        let old = [UInt8(0)] + [UInt8](repeating: 0xFF, count: 8) + Array("token".utf8)
        #expect(TokenCopy.decode(old) == nil)
        #expect(TokenCopy.decode([]) == nil)
        #expect(TokenCopy.decode([2] + [UInt8](repeating: 0, count: 16)) == nil, "no token bytes")
        #expect(TokenCopy.decode([3, 1, 2, 3]) == nil)
        #expect(TokenCopy.decode([3] + [UInt8](repeating: 0, count: 16) + Array("format 3".utf8)) == nil, "the format before bound copies")
        #expect(TokenCopy.decode([4, 2] + [UInt8](repeating: 0, count: 16) + Array("t".utf8)) == nil, "neither bound nor bearer")
        #expect(TokenCopy.decode([1]) == nil)
        #expect(TokenCopy.decode([5] + [UInt8](repeating: 0, count: 8) + [0, 2, 65, 66]) == nil, "an answer with no text")
        #expect(TokenCopy.decode([5, 0, 0]) == nil)
        #expect(TokenCopy.decode([1] + Array("12".utf8)) == nil, "an alias without a fingerprint, as before")
        #expect(TokenCopy.decode([1, 0, 9] + Array("short".utf8)) == nil, "a fingerprint longer than the payload")
    }
}
