import Foundation
import Testing

@testable import LatchkeyEssentials

/// The one directory check behind the vault's directory, the agent's socket directories and the
/// demo's private directory: each requirement, on the directory the path names at that moment.
@Suite("A trusted directory is checked once, by one rule per requirement")
struct TrustedDirectoryTests {
    @Test("private: group and others may not even open it; changed only by you: they may read, not write")
    func modes() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let closed = try scratch.directory("closed", mode: 0o700)
        let readable = try scratch.directory("readable", mode: 0o755)
        let writable = try scratch.directory("writable", mode: 0o775)
        #expect(TrustedDirectory.problem(closed, .privateToYou) == nil)
        #expect(TrustedDirectory.problem(readable, .privateToYou) == .tooOpen(mode: 0o755))
        #expect(TrustedDirectory.problem(readable, .changedOnlyByYou) == nil)
        #expect(TrustedDirectory.problem(writable, .changedOnlyByYou) == .tooOpen(mode: 0o775))
        #expect(TrustedDirectory.problem(writable, .keepsYourEntries) == .tooOpen(mode: 0o775))
    }

    @Test("a sticky directory others may write keeps your entries, but is neither private nor changed only by you")
    func sticky() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let shared = try scratch.directory("shared", mode: 0o1777)
        #expect(TrustedDirectory.problem(shared, .keepsYourEntries) == nil)
        #expect(TrustedDirectory.problem(shared, .changedOnlyByYou) == .tooOpen(mode: 0o1777))
        #expect(TrustedDirectory.problem(shared, .privateToYou) == .tooOpen(mode: 0o1777))
    }

    @Test("a link in the directory's place is refused where links are not followed, and judged by its target where they are")
    func links() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let target = try scratch.directory("target", mode: 0o700)
        let link = scratch.path + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(TrustedDirectory.problem(link, .privateToYou, followingLinks: false) == .notADirectory)
        #expect(TrustedDirectory.problem(link, .privateToYou) == nil)
    }

    @Test("a file, or nothing, where the directory should be")
    func notADirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        #expect(TrustedDirectory.problem(try scratch.file("file"), .changedOnlyByYou) == .notADirectory)
        #expect(TrustedDirectory.problem(scratch.path + "/missing", .changedOnlyByYou) == .unreadable(errno: ENOENT))
    }

    @Test("another user's directory is refused for every requirement; root's keeps your entries")
    func owners() throws {
        #expect(TrustedDirectory.problem("/", .keepsYourEntries) == nil, "root's, not writable by others")
        guard geteuid() == 0 else {
            #expect(TrustedDirectory.problem("/", .privateToYou) == .ownedBy(uid: 0, mode: 0o755))
            return
        }
        // As root (CI), a directory given to nobody stands for another user's.
        let scratch = try Scratch()
        defer { scratch.remove() }
        let theirs = try scratch.directory("theirs", mode: 0o700)
        #expect(chown(theirs, 65_534, 65_534) == 0)
        for requirement: TrustedDirectory.Requirement in [.privateToYou, .changedOnlyByYou, .keepsYourEntries] {
            #expect(TrustedDirectory.problem(theirs, requirement) == .ownedBy(uid: 65_534, mode: 0o700))
        }
    }
}
