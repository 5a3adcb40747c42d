import Foundation
import LatchkeyEssentials
import Testing

/// The check `latchkey` runs on `latchkey-cli` (and the core on second-factor plugins) before
/// running it, attacked the way another local user would.
@Suite("A program runs only if nobody but this user or root can change it or the way to it")
struct TrustedProgramTests {
    func refusal(_ path: String) -> TrustedProgram.Refusal? {
        do {
            _ = try TrustedProgram.open(path)
            return nil
        } catch {
            return error
        }
    }

    @Test("a private executable is accepted, with its real path, through links and dot-dot")
    func accepted() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let program = try scratch.file("libexec/latchkey/latchkey-cli", "#!/bin/sh\n", mode: 0o755)
        let real = try #require(
            realpath(program, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            })
        #expect(try TrustedProgram.open(program).path == real)
        try scratch.directory("bin")
        #expect(symlink("../libexec/latchkey/latchkey-cli", scratch.path + "/bin/latchkey-cli") == 0)
        #expect(try TrustedProgram.open(scratch.path + "/bin/latchkey-cli").path == real)
        #expect(try TrustedProgram.open(scratch.path + "/bin/../libexec/./latchkey/latchkey-cli").path == real)
    }

    @Test("a directory above the program that others can write is refused, and named")
    func writableDirectoryAbove() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let program = try scratch.file("libexec/latchkey/latchkey-cli", mode: 0o755)
        let libexec = scratch.path + "/libexec"
        chmod(libexec, 0o777)
        let reason = try #require(refusal(program))
        guard case .writableByOthers(let path, let mode) = reason else {
            Issue.record("refused for another reason: \(reason)")
            return
        }
        #expect(path.hasSuffix("/libexec") && mode == 0o777)
        #expect(reason.description.contains("libexec is writable by other users (mode 777)"))
        chmod(libexec, 0o775)
        #expect(refusal(program) != nil, "group-writable is writable by others too")
    }

    @Test("a program its group can write is refused")
    func groupWritableProgram() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let program = try scratch.file("latchkey-cli", mode: 0o775)
        #expect(refusal(program).map { "\($0)" }?.contains("latchkey-cli is writable by other users (mode 775)") == true)
    }

    @Test("a symbolic link in a directory others can write is refused, though it points at a trusted program")
    func linkInWritableDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let trusted = try scratch.file("trusted/latchkey-cli", mode: 0o755)
        let shared = try scratch.directory("shared", mode: 0o777)
        #expect(symlink(trusted, shared + "/latchkey-cli") == 0)
        #expect(refusal(shared + "/latchkey-cli") == .writableByOthers(path: try realDirectory(shared), mode: 0o777))
    }

    @Test("a symbolic link to a program in a directory others can write is refused")
    func linkIntoWritableDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let shared = try scratch.directory("shared", mode: 0o777)
        let planted = try scratch.file("shared/latchkey-cli", mode: 0o755)
        chmod(shared, 0o777)
        #expect(symlink(planted, scratch.path + "/latchkey-cli") == 0)
        #expect(refusal(scratch.path + "/latchkey-cli") == .writableByOthers(path: try realDirectory(shared), mode: 0o777))
    }

    @Test("what was checked is what runs: the descriptor stays on the checked file when another is renamed over its path")
    func renamedAfterTheCheck() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let program = try scratch.file("latchkey-cli", "checked", mode: 0o755)
        let other = try scratch.file("other", "swapped in", mode: 0o755)
        let checked = try TrustedProgram.open(program)
        var before = stat()
        #expect(stat(program, &before) == 0)
        #expect(rename(other, program) == 0)
        var held = stat()
        #expect(fstat(checked.descriptor, &held) == 0)
        #expect(held.st_ino == before.st_ino)
        var now = stat()
        #expect(stat(program, &now) == 0 && now.st_ino != held.st_ino)
    }

    @Test("a missing program, a directory, a file without execute permission and a loop of links are refused, each as such")
    func notPrograms() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        #expect(refusal(scratch.path + "/none/latchkey-cli").map { if case .missing = $0 { true } else { false } } == true)
        #expect(refusal(try scratch.directory("dir")).map { if case .notExecutable = $0 { true } else { false } } == true)
        #expect(refusal(try scratch.file("plain", mode: 0o644)).map { if case .notExecutable = $0 { true } else { false } } == true)
        #expect(symlink(scratch.path + "/b", scratch.path + "/a") == 0 && symlink(scratch.path + "/a", scratch.path + "/b") == 0)
        #expect(refusal(scratch.path + "/a") == .tooManyLinks(path: scratch.path + "/a"))
    }

    @Test("a sticky directory others can write is accepted on the way to a program of ours")
    func stickyDirectoryOnTheWay() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let sticky = try scratch.directory("tmp", mode: 0o1777)
        let program = try scratch.file("tmp/ours/latchkey-cli", mode: 0o755)
        chmod(sticky, 0o1777)
        #expect(refusal(program) == nil)
        // A link of ours in it, to a program elsewhere, is on the way too.
        let elsewhere = try scratch.file("bin/latchkey-cli", mode: 0o755)
        #expect(symlink(elsewhere, sticky + "/link") == 0)
        #expect(refusal(sticky + "/link") == nil)
    }

    @Test("a sticky directory others can write is refused as the one holding the program or library: others can add files beside it")
    func stickyDirectoryHoldingTheFile() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let sticky = try scratch.directory("tmp", mode: 0o1777)
        let program = try scratch.file("tmp/latchkey-cli", mode: 0o755)
        let library = try scratch.file("tmp/libcurl.so.4", mode: 0o644)
        chmod(sticky, 0o1777)
        let expected = TrustedProgram.Refusal.writableByOthers(path: try realDirectory(sticky), mode: 0o1777)
        #expect(refusal(program) == expected)
        #expect(expected.description.hasSuffix("is writable by other users (mode 1777: sticky, but they can add files beside it)"))
        #expect(throws: expected) { _ = try TrustedProgram.open(library, as: .sharedLibrary) }
        // A link from a private directory to the program in the sticky one is refused alike.
        #expect(symlink(program, try scratch.directory("bin") + "/latchkey-cli") == 0)
        #expect(refusal(scratch.path + "/bin/latchkey-cli") == expected)
    }

    @Test("a shared library needs no execute permission but must be a regular file")
    func sharedLibrary() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let library = try scratch.file("lib/libcurl.so.4.8.0", mode: 0o644)
        #expect(symlink("libcurl.so.4.8.0", scratch.path + "/lib/libcurl.so.4") == 0)
        #expect(try TrustedProgram.open(scratch.path + "/lib/libcurl.so.4", as: .sharedLibrary).path == realDirectory(library))
        #expect(refusal(library) == .notExecutable(path: try realDirectory(library)), "a program must still be executable")
        let directory = try scratch.directory("lib/libsecret-1.so.0")
        #expect(throws: TrustedProgram.Refusal.notRegularFile(path: try realDirectory(directory))) {
            _ = try TrustedProgram.open(directory, as: .sharedLibrary)
        }
    }

    @Test(
        "a program, a directory above it or a link on the way that belongs to another user is refused",
        .enabled(if: geteuid() == 0, "only root can give a file away"))
    func anotherUsers() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let program = try scratch.file("theirs/latchkey-cli", mode: 0o755)
        #expect(chown(program, 65_534, 65_534) == 0)
        #expect(refusal(program) == .anotherUsers(path: try realDirectory(scratch.path) + "/theirs/latchkey-cli", owner: 65_534))

        let mine = try scratch.file("above/latchkey-cli", mode: 0o755)
        #expect(chown(scratch.path + "/above", 65_534, 65_534) == 0)
        #expect(refusal(mine) == .anotherUsers(path: try realDirectory(scratch.path) + "/above", owner: 65_534))

        // In a sticky directory anyone may create the link; only its owner tells whose it is.
        let sticky = try scratch.directory("sticky", mode: 0o1777)
        let target = try scratch.file("mine/latchkey-cli", mode: 0o755)
        #expect(symlink(target, sticky + "/latchkey-cli") == 0)
        #expect(lchown(sticky + "/latchkey-cli", 65_534, 65_534) == 0)
        #expect(refusal(sticky + "/latchkey-cli") == .anotherUsers(path: try realDirectory(sticky) + "/latchkey-cli", owner: 65_534))
    }

    /// `path` with its links resolved, as the check names entries.
    func realDirectory(_ path: String) throws -> String {
        try #require(
            realpath(path, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            })
    }
}
