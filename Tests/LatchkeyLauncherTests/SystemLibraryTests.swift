import Foundation
import LatchkeyEssentials
import Testing

/// How `latchkey-cli` finds libcurl and libsecret: by absolute path in the system's library
/// directories only, each accepted by the rule programs follow, so a library another user planted
/// (beside the program, in a directory they own or can write, behind a link of theirs) never loads.
@Suite("A library is loaded only from the system's library directories, and only if nobody else can change it")
struct SystemLibraryTests {
    @Test("the system's directories are searched, multiarch first, and nothing relative or under /usr/local")
    func directories() {
        let directories = SystemLibrary.directories
        #expect(directories.allSatisfy { $0.hasPrefix("/") })
        #expect(!directories.contains { $0.hasPrefix("/usr/local") })
        #expect(Array(directories.suffix(4)) == ["/usr/lib64", "/lib64", "/usr/lib", "/lib"])
        #if arch(x86_64)
            #expect(Array(directories.prefix(2)) == ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"])
        #endif
    }

    @Test("libcurl is found on this system, by its real path in a system directory")
    func libcurlIsFound() throws {
        let path = try SystemLibrary.locate(["libcurl.so.4", "libcurl-gnutls.so.4"])
        #expect(path.hasPrefix("/usr/lib") && path.contains("/libcurl"))
    }

    @Test("the first name wins in any directory over a later name, and a directory that does not exist is passed over")
    func searchOrder() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let first = try scratch.directory("first", mode: 0o755)
        let second = try scratch.directory("second", mode: 0o755)
        try scratch.file("first/libcurl-gnutls.so.4", mode: 0o644)
        let preferred = try scratch.file("second/libcurl.so.4", mode: 0o644)
        let found = try SystemLibrary.locate(
            ["libcurl.so.4", "libcurl-gnutls.so.4"], in: [scratch.path + "/none", first, second])
        #expect(found == (try real(preferred)))
    }

    @Test("a library in none of the directories is missing, naming what was looked for and where")
    func missing() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let directory = try scratch.directory("lib", mode: 0o755)
        let failure = SystemLibrary.Failure.missing(names: ["libcurl.so.4", "libcurl-gnutls.so.4"], directories: [directory])
        #expect(throws: failure) { _ = try SystemLibrary.locate(["libcurl.so.4", "libcurl-gnutls.so.4"], in: [directory]) }
        #expect(failure.description == "neither libcurl.so.4 nor libcurl-gnutls.so.4 is in any of \(directory)")
        #expect(
            SystemLibrary.Failure.missing(names: ["libsecret-1.so.0"], directories: ["/usr/lib", "/lib"]).description
                == "libsecret-1.so.0 is in none of /usr/lib, /lib")
    }

    @Test("a library in a directory others can write, sticky or not, is refused rather than passed over")
    func writableDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        for mode: mode_t in [0o777, 0o1777, 0o775] {
            let shared = try scratch.directory("shared-\(String(mode, radix: 8))", mode: mode)
            try scratch.file("shared-\(String(mode, radix: 8))/libcurl.so.4", mode: 0o644)
            chmod(shared, mode)
            let trusted = try scratch.directory("trusted", mode: 0o755)
            try scratch.file("trusted/libcurl.so.4", mode: 0o644)
            #expect(throws: SystemLibrary.Failure.refused(.writableByOthers(path: try real(shared), mode: UInt32(mode)))) {
                _ = try SystemLibrary.locate(["libcurl.so.4"], in: [shared, trusted])
            }
        }
    }

    @Test("a link in a library directory to a file others can write, or into a directory they can, is refused")
    func linkToWritable() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let lib = try scratch.directory("lib", mode: 0o755)
        let writable = try scratch.file("elsewhere/libcurl.so.4.8.0", mode: 0o666)
        chmod(writable, 0o666)
        #expect(symlink(writable, lib + "/libcurl.so.4") == 0)
        #expect(throws: SystemLibrary.Failure.refused(.writableByOthers(path: try real(writable), mode: 0o666))) {
            _ = try SystemLibrary.locate(["libcurl.so.4"], in: [lib])
        }
        let shared = try scratch.directory("shared", mode: 0o777)
        try scratch.file("shared/libsecret-1.so.0", mode: 0o644)
        chmod(shared, 0o777)
        #expect(symlink(shared + "/libsecret-1.so.0", lib + "/libsecret-1.so.0") == 0)
        #expect(throws: SystemLibrary.Failure.refused(.writableByOthers(path: try real(shared), mode: 0o777))) {
            _ = try SystemLibrary.locate(["libsecret-1.so.0"], in: [lib])
        }
    }

    @Test(
        "a library, or a library directory, that belongs to another user is refused",
        .enabled(if: geteuid() == 0, "only root can give a file away"))
    func anotherUsers() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let lib = try scratch.directory("lib", mode: 0o755)
        let library = try scratch.file("lib/libcurl.so.4", mode: 0o644)
        #expect(chown(library, 65_534, 65_534) == 0)
        #expect(throws: SystemLibrary.Failure.refused(.anotherUsers(path: try real(library), owner: 65_534))) {
            _ = try SystemLibrary.locate(["libcurl.so.4"], in: [lib])
        }
        let theirs = try scratch.directory("theirs", mode: 0o755)
        try scratch.file("theirs/libcurl.so.4", mode: 0o644)
        #expect(chown(theirs, 65_534, 65_534) == 0)
        #expect(throws: SystemLibrary.Failure.refused(.anotherUsers(path: try real(theirs), owner: 65_534))) {
            _ = try SystemLibrary.locate(["libcurl.so.4"], in: [theirs])
        }
    }

    /// `path` with its links resolved, as the check names entries.
    func real(_ path: String) throws -> String {
        try #require(
            realpath(path, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            })
    }
}
