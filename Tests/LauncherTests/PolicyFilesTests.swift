import Foundation
import LatchkeyEssentials
import Testing

/// The policy files' fingerprint, as the launcher takes it (stat now) and as a reader hands it on
/// (`PolicySnapshot`, taken before the files were read).
@Suite("Policy files are fingerprinted so that an edit in place is seen at once")
struct PolicyFilesTests {
    /// config.toml and two providers directories in a scratch directory, as an environment.
    static func layout(_ scratch: Scratch) throws -> (lookup: @Sendable (String) -> String?, config: String, first: String, second: String)
    {
        let config = try scratch.file("config/latchkey/config.toml", "[agent]\nconfirm_timeout = 5\n")
        let first = try scratch.directory("config/latchkey/providers.d")
        let second = try scratch.directory("etc")
        let root = scratch.path
        return ({ $0 == "XDG_CONFIG_HOME" ? root + "/config" : nil }, config, first, second)
    }

    /// `>`: the same inode, new bytes of the same length, within the same second.
    static func rewriteInPlace(_ path: String, _ text: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    @Test("a provider file rewritten in place with as many bytes, within the same second, changes the fingerprint")
    func inPlaceEdit() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (lookup, _, first, _) = try Self.layout(scratch)
        let file = try scratch.file("config/latchkey/providers.d/a.toml", "confirm = false\n")
        let before = try #require(PolicyFiles.currentFingerprint(ofProvider: "a", lookup))
        var inode = stat()
        stat(file, &inode)
        try Self.rewriteInPlace(file, "confirm = true \n")
        var after = stat()
        stat(file, &after)
        #expect(inode.st_ino == after.st_ino && inode.st_size == after.st_size)
        #expect(PolicyFiles.currentFingerprint(ofProvider: "a", lookup) != before)
        #expect(first.hasSuffix("providers.d"))
    }

    @Test("config.toml and the first directory holding the provider's file count; a later directory's does not")
    func whichFiles() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (lookup, config, _, _) = try Self.layout(scratch)
        let environment: @Sendable (String) -> String? = {
            $0 == "LATCHKEY_PROVIDERS_DIR" ? nil : lookup($0)
        }
        let missing = try #require(PolicyFiles.currentFingerprint(ofProvider: "a", environment))
        #expect(missing.hasSuffix("|-|-"), "absent from both directories")
        let file = try scratch.file("config/latchkey/providers.d/a.toml", "forward = true\n")
        let present = try #require(PolicyFiles.currentFingerprint(ofProvider: "a", environment))
        #expect(present != missing && !present.hasSuffix("|-"), "the search stops at the file read")
        try Self.rewriteInPlace(config, "[agent]\nconfirm_timeout = 6\n")
        #expect(PolicyFiles.currentFingerprint(ofProvider: "a", environment) != present)
        unlink(file)
        #expect(PolicyFiles.currentFingerprint(ofProvider: "a", environment)?.hasSuffix("|-|-") == true)
    }

    @Test("a snapshot gives the fingerprint the launcher computes while nothing changed, and none while a file has not settled")
    func snapshot() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (lookup, config, _, _) = try Self.layout(scratch)
        try scratch.file("config/latchkey/providers.d/a.toml", "confirm = true\n")
        usleep(useconds_t(PolicyFiles.settleTime / 1_000 + 1_000))
        let snapshot = PolicySnapshot(lookup)
        #expect(snapshot.isSettled && snapshot == PolicySnapshot(lookup))
        let configIdentity = PolicyFiles.identity(of: config)
        #expect(
            snapshot.fingerprint(ofProvider: "a", configIdentity: configIdentity) == PolicyFiles.currentFingerprint(ofProvider: "a", lookup)
        )
        #expect(
            snapshot.fingerprint(ofProvider: "b", configIdentity: configIdentity) == PolicyFiles.currentFingerprint(ofProvider: "b", lookup)
        )

        try scratch.file("config/latchkey/providers.d/a.toml", "confirm = false\n")
        let fresh = PolicySnapshot(lookup)
        #expect(!fresh.isSettled && fresh != fresh, "changed just now: read again until it settles")
        #expect(fresh.fingerprint(ofProvider: "a", configIdentity: configIdentity) == nil)
        #expect(fresh != snapshot)
    }
}
