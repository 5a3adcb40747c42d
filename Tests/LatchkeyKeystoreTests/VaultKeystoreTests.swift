import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyVault

@Suite("The encrypted vault")
struct VaultKeystoreTests {
    /// scrypt N = 2^10: the format's smallest allowed cost, so these tests stay fast.
    static let cheap = VaultFormat.KDFParameters(log2N: 10, r: 8, p: 1)
    /// magic 8 + version 2 + kdf 1 + log2N 1 + r 4 + p 4 + salt length 1 + salt 16 + aead 1 + key check 16
    static let headerLength = 54

    static func vault(_ path: String, passphrase: String = FixedPassphrase().value) -> VaultKeystore {
        VaultKeystore(path: path, passphrase: FixedPassphrase(value: passphrase), kdf: cheap)
    }

    static func fileBytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber).map(\.intValue) ?? -1
    }

    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in haystack[start..<start + needle.count].elementsEqual(needle) }
    }

    /// A vault holding one record, and its path.
    static func populatedVault(in directory: TemporaryDirectory) async throws -> String {
        let path = directory.path + "/vault"
        try await vault(path).update { $0.append(.testing()) }
        return path
    }

    static func keystoreError(_ operation: () async throws -> Void) async -> KeystoreError? {
        do {
            try await operation()
            return nil
        } catch {
            return error as? KeystoreError
        }
    }

    // MARK: - Round trip

    @Test("records written by one instance are read back by another, 64 KiB tokens included")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/vault"
        let huge = "fake-" + String(repeating: "A1b2C3d4", count: 8 * 1024)
        let records = [
            AccountRecord.testing(),
            AccountRecord.testing(
                provider: "github", subject: "583231", displayName: "octocat", accessToken: huge, refreshToken: huge + "r"),
        ]
        try await Self.vault(path).update { $0 = records }

        let readBack = try await Self.vault(path).records()
        #expect(readBack == records)
        #expect(readBack[1].accessToken.exposedValue.utf8.count > 64 * 1024)
    }

    @Test("a vault that does not exist reads as empty, and an update that changes nothing creates no file")
    func emptyVault() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/vault"
        #expect(try await Self.vault(path).records() == [])
        let count = try await Self.vault(path).update { $0.count }
        #expect(count == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("an update replaces and removes records")
    func updateAndRemove() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        try await Self.vault(path).update { records in
            records[0].accessToken = Secret("fake-rotated")
            records.append(.testing(subject: "second"))
        }
        #expect(try await Self.vault(path).records().map(\.accessToken.exposedValue) == ["fake-rotated", "fake-access-token"])
        try await Self.vault(path).update { $0.removeAll { $0.subject == "second" } }
        #expect(try await Self.vault(path).records().map(\.subject) == [AccountRecord.testing().subject])
    }

    // MARK: - Registered clients

    static let registered = RegisteredClient(
        provider: "corp", registrationEndpoint: "https://corp.example/register",
        redirectURIs: ["http://127.0.0.1:38100/oauth2redirect/corp"],
        clientID: "client-7a1", registrationAccessToken: Secret("fake-registration-token-5e2"),
        registrationClientURI: "https://corp.example/register/client-7a1", registeredAt: Date(timeIntervalSince1970: 1_750_000_000))

    @Test("a registered client is kept beside the accounts: changing either keeps the other, and its token is encrypted")
    func registeredClientsBesideAccounts() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        try await Self.vault(path).updateRegisteredClients { $0.append(Self.registered) }
        try await Self.vault(path).update { $0.append(.testing(subject: "second")) }
        #expect(try await Self.vault(path).registeredClients() == [Self.registered])
        try await Self.vault(path).updateRegisteredClients { $0[0].clientID = "client-8b2" }
        #expect(try await Self.vault(path).records().count == 2)
        #expect(try await Self.vault(path).registeredClient(for: "corp")?.clientID == "client-8b2")
        #expect(!Self.contains(try Self.fileBytes(path), "fake-registration-token-5e2"))
    }

    @Test("a vault written before registered clients were kept reads as having none, and its accounts as before")
    func vaultWithoutClients() throws {
        let before = Array(#"{"accounts":[]}"#.utf8)
        #expect(try VaultContents.decodeClients(before).isEmpty)
        let written = try VaultContents.encode([.testing()])
        #expect(!Self.contains(written, "clients"), "a vault without registered clients is written as before")
        #expect(try VaultContents.decode(try VaultContents.encode([.testing()], clients: [Self.registered])) == [.testing()])
    }

    @Test("the vault file never holds a token, subject or name in plaintext")
    func noPlaintext() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/vault"
        let record = AccountRecord.testing(
            subject: "subject-7f3c", displayName: "alice@example.com", accessToken: "fake-access-9d1e8a",
            refreshToken: "fake-refresh-44b0c2")
        try await Self.vault(path).update { $0.append(record) }
        let bytes = try Self.fileBytes(path)
        #expect(Array(bytes.prefix(8)) == Array("LATCHKEY".utf8))
        for secret in ["fake-access-9d1e8a", "fake-refresh-44b0c2", "subject-7f3c", "alice@example.com", "accessToken", "google"] {
            #expect(!Self.contains(bytes, secret), "\(secret) is in the vault file in plaintext")
        }
        #expect(Self.contains(Array(#"say "fake-access-9d1e8a" here"#.utf8), "fake-access-9d1e8a"), "the search itself works")
    }

    @Test("the vault file is mode 0600 and a missing directory is created 0700")
    func permissions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/share/latchkey/vault"
        try await Self.vault(path).update { $0.append(.testing()) }
        #expect(try Self.mode(path) == 0o600)
        #expect(try Self.mode(directory.path + "/share/latchkey") == 0o700)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/share/latchkey").filter {
            $0.contains(".tmp-")
        }
        #expect(leftovers == [])
    }

    // MARK: - Refusals

    @Test("a wrong passphrase is reported as such and leaves the file unchanged")
    func wrongPassphrase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        let before = try Self.fileBytes(path)
        let wrong = Self.vault(path, passphrase: "Tr0ub4dor&3")
        #expect(await Self.keystoreError { _ = try await wrong.records() } == .wrongPassphrase(path: path))
        #expect(await Self.keystoreError { try await wrong.update { $0.removeAll() } } == .wrongPassphrase(path: path))
        #expect(try Self.fileBytes(path) == before)
        #expect(try await Self.vault(path).records().count == 1)
    }

    @Test("a truncated vault is damaged", arguments: [4, 40, -10])
    func truncated(keep: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        let bytes = try Self.fileBytes(path)
        try directory.write("vault", bytes: Array(bytes.prefix(keep > 0 ? keep : bytes.count + keep)))
        let error = await Self.keystoreError { _ = try await Self.vault(path).records() }
        guard case .damaged(let reportedPath, _)? = error else {
            Issue.record("expected .damaged, got \(String(describing: error))")
            return
        }
        #expect(reportedPath == path)
    }

    // Offsets: the first ciphertext byte (after header and nonce), a later one, the last tag byte.
    @Test("a flipped byte in the ciphertext or tag makes the vault damaged", arguments: [54 + 12, 54 + 40, -1])
    func flippedCiphertextByte(offset: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        var bytes = try Self.fileBytes(path)
        bytes[offset >= 0 ? offset : bytes.count + offset] ^= 0x01
        try directory.write("vault", bytes: bytes)
        let error = await Self.keystoreError { _ = try await Self.vault(path).records() }
        guard case .damaged? = error else {
            Issue.record("expected .damaged, got \(String(describing: error))")
            return
        }
    }

    @Test("a vault whose header says format version 2 was written by a newer Latchkey")
    func newerFormat() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        var bytes = try Self.fileBytes(path)
        #expect(bytes[8] == 0 && bytes[9] == 1)
        bytes[9] = 2
        try directory.write("vault", bytes: bytes)
        #expect(await Self.keystoreError { _ = try await Self.vault(path).records() } == .newerFormat(path: path, version: 2))
    }

    @Test("a vault other users can read is refused")
    func unsafePermissions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(await Self.keystoreError { _ = try await Self.vault(path).records() } == .unsafePermissions(path: path, mode: "644"))
        #expect(
            await Self.keystoreError { try await Self.vault(path).update { $0.removeAll() } } == .unsafePermissions(path: path, mode: "644")
        )
        #expect(try Self.mode(path) == 0o644)
    }

    @Test(
        "what is not a regular file of sane size is refused at once, by reads, updates and doctor's check alike",
        arguments: ["a FIFO", "a 100 GB sparse file", "a symbolic link", "a directory"])
    func notAVaultFile(what: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/vault"
        let expected: String
        switch what {
        case "a FIFO":
            #expect(mkfifo(path, 0o600) == 0)
            expected = "it is a FIFO, not a regular file"
        case "a 100 GB sparse file":
            try directory.write("vault", "")
            #expect(truncate(path, 100 << 30) == 0)
            expected = "it is 107374182400 bytes, larger than any vault Latchkey writes (64 MiB)"
        case "a symbolic link":
            let real = try await Self.populatedVault(in: directory)
            #expect(rename(real, path + ".real") == 0 && symlink(path + ".real", path) == 0)
            expected = "it is a symbolic link, not a regular file"
        default:
            #expect(mkdir(path, 0o700) == 0)
            expected = "it is a directory, not a regular file"
        }
        let error = KeystoreError.notAVaultFile(path: path, reason: expected)
        #expect(await Self.keystoreError { _ = try await Self.vault(path).records() } == error)
        #expect(await Self.keystoreError { try await Self.vault(path).update { $0.append(.testing()) } } == error)
        #expect(await Self.keystoreError { try await Self.vault(path).prepareForWriting() } == error)
        #expect(throws: error) { try Self.vault(path).checkPermissions() }
        #expect(error.description.contains("move it aside"))
    }

    @Test("records that would make a vault over 64 MiB are not saved, and the vault keeps what it held")
    func tooLargeToSave() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        let before = try Self.fileBytes(path)
        let error = await Self.keystoreError {
            try await Self.vault(path).update { $0.append(.testing(subject: "huge", accessToken: String(repeating: "a", count: 65 << 20))) }
        }
        guard case .io(_, let reason)? = error else {
            Issue.record("expected .io, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("more than a vault may hold (64 MiB)"))
        #expect(try Self.fileBytes(path) == before)
    }

    @Test("a file that is not a vault is damaged")
    func garbage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("vault", bytes: Array("XLATCHKEY".utf8) + (0..<300).map { _ in UInt8.random(in: 0...255) })
        let error = await Self.keystoreError { _ = try await Self.vault(path).records() }
        guard case .damaged(_, let reason)? = error else {
            Issue.record("expected .damaged, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("header"))
    }

    @Test("error texts name the file, never a token")
    func errorTexts() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.populatedVault(in: directory)
        let error = try #require(await Self.keystoreError { _ = try await Self.vault(path, passphrase: "hunter2-guess").records() })
        #expect(error.description.contains(path))
        #expect(!error.description.contains("fake-access-token"))
        #expect(!error.description.contains("hunter2-guess"))
        #expect(error.category == .keystore)
    }

    // MARK: - Concurrency

    @Test("20 concurrent updates through separate instances on one path keep all 20 records")
    func concurrentUpdates() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/vault"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await Self.vault(path).update { $0.append(.testing(subject: "user-\(index)")) }
                }
            }
            try await group.waitForAll()
        }
        let subjects = try await Self.vault(path).records().map(\.subject)
        #expect(subjects.count == 20)
        #expect(Set(subjects) == Set((0..<20).map { "user-\($0)" }))
    }

    @Test("updates that await inside the lock, more of them than threads, all complete")
    func awaitingUpdatesDoNotStarveThePool() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/vault"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await Self.vault(path).update { records in
                        // Like a refresh: a network round trip while the lock is held.
                        try await Task.sleep(for: .milliseconds(50))
                        records.append(.testing(subject: "slow-\(index)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await Self.vault(path).records().count == 8)
    }

    // MARK: - LATCHKEY_PASSPHRASE_FILE

    @Test("a passphrase file written on Windows (CRLF) loses its line ending")
    func passphraseFileCRLF() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("crlf", "correct horse\r\n")
        #expect(try PassphraseFile(path: path).passphrase(forVault: "v", creating: false).exposedValue == "correct horse")
    }

    @Test("a passphrase file has one trailing newline stripped, and only one")
    func passphraseFileNewline() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let one = try directory.write("one", "correct horse\n")
        let two = try directory.write("two", "correct horse\n\n")
        let none = try directory.write("none", "correct horse")
        #expect(try PassphraseFile(path: one).passphrase(forVault: "v", creating: false).exposedValue == "correct horse")
        #expect(try PassphraseFile(path: two).passphrase(forVault: "v", creating: false).exposedValue == "correct horse\n")
        #expect(try PassphraseFile(path: none).passphrase(forVault: "v", creating: false).exposedValue == "correct horse")
    }

    @Test("a passphrase file other users can read is refused")
    func passphraseFileMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("passphrase", "correct horse\n", mode: 0o644)
        #expect {
            try PassphraseFile(path: path).passphrase(forVault: "v", creating: false)
        } throws: { error in
            guard case .passphraseFile(let reportedPath, let reason) = error as? KeystoreError else { return false }
            return reportedPath == path && reason.contains("chmod 600")
        }
    }

    @Test("an empty or missing passphrase file is refused", arguments: ["", "\n"])
    func passphraseFileEmpty(contents: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("passphrase", contents)
        #expect(throws: KeystoreError.passphraseFile(path: path, reason: "it is empty")) {
            try PassphraseFile(path: path).passphrase(forVault: "v", creating: false)
        }
        #expect(throws: KeystoreError.self) {
            try PassphraseFile(path: directory.path + "/missing").passphrase(forVault: "v", creating: false)
        }
    }
}
