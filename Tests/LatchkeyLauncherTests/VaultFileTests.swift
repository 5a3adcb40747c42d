import Foundation
import LatchkeyEssentials
import LatchkeyLauncher
import Testing

@testable import LatchkeyVault

@Suite("The vault file's one check: type, size, owner and mode, and its directory")
struct VaultFileTests {
    @Test("a private regular file in a private directory is read whole; a missing one is no vault yet")
    func accepted() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = try scratch.file("vault", "LATCHKEY…")
        #expect(VaultFile.read(path) == .success(Array("LATCHKEY…".utf8)))
        #expect(VaultFile.check(path) == .success(true))
        #expect(VaultFile.read(scratch.path + "/none") == .success(nil))
        #expect(VaultFile.check(scratch.path + "/none") == .success(false))
    }

    @Test("a FIFO at the vault's path is refused at once, never waited on for a writer")
    func fifo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path + "/vault"
        #expect(mkfifo(path, 0o600) == 0)
        #expect(VaultFile.read(path) == .failure(.notARegularFile("a FIFO")))
        #expect(VaultFile.check(path) == .failure(.notARegularFile("a FIFO")))
        #expect(UnlockedVault.records(at: path) == nil)
    }

    @Test("a 100 GB sparse file is refused by its size before anything is allocated for it")
    func sparse() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = try scratch.file("vault")
        #expect(truncate(path, 100 << 30) == 0)
        #expect(VaultFile.read(path) == .failure(.tooLarge(bytes: 100 << 30)))
        #expect(VaultFile.check(path) == .failure(.tooLarge(bytes: 100 << 30)))
        #expect(UnlockedVault.records(at: path) == nil)
        // The largest size allowed is still read.
        #expect(truncate(path, off_t(VaultFile.largestSize)) == 0)
        guard case .success(let bytes?) = VaultFile.read(path) else {
            Issue.record("a vault of exactly the largest size was refused")
            return
        }
        #expect(bytes.count == VaultFile.largestSize)
    }

    @Test("a symbolic link, a directory, a file others can read, and a directory others can write are refused")
    func refused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let target = try scratch.file("real")
        let link = scratch.path + "/link"
        #expect(symlink(target, link) == 0)
        #expect(VaultFile.read(link) == .failure(.notARegularFile("a symbolic link")))
        #expect(VaultFile.check(link) == .failure(.notARegularFile("a symbolic link")))

        let directory = try scratch.directory("vault-dir")
        #expect(VaultFile.read(directory) == .failure(.notARegularFile("a directory")))

        let readable = try scratch.file("readable", mode: 0o640)
        #expect(VaultFile.read(readable) == .failure(.accessibleByOthers(mode: 0o640)))
        #expect(VaultFile.check(readable) == .failure(.accessibleByOthers(mode: 0o640)))

        let shared = try scratch.directory("shared", mode: 0o777)
        let inShared = try scratch.file("shared/vault")
        chmod(shared, 0o777)
        #expect(VaultFile.read(inShared) == .failure(.unsafeDirectory(path: shared, mode: 0o777, owner: nil)))
        #expect(VaultFile.check(inShared) == .failure(.unsafeDirectory(path: shared, mode: 0o777, owner: nil)))
    }

    @Test("a vault that belongs to another user is refused, even to root", .enabled(if: geteuid() == 0, "only root can give a file away"))
    func anotherUsers() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = try scratch.file("vault")
        #expect(chown(path, 65_534, 65_534) == 0)
        #expect(VaultFile.read(path) == .failure(.ownedByAnotherUser(owner: 65_534)))
        let directory = try scratch.directory("theirs")
        let inside = try scratch.file("theirs/vault")
        #expect(chown(directory, 65_534, 65_534) == 0)
        #expect(VaultFile.check(inside) == .failure(.unsafeDirectory(path: directory, mode: 0o700, owner: 65_534)))
    }
}
