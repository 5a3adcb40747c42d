import Foundation
import LatchkeyEssentials
import Testing

/// The policy files' fingerprint, as the launcher takes it (stat now) and as a reader hands it on
/// (`PolicySnapshot`, taken before the files were read).
@Suite("Policy files are fingerprinted so that an edit in place is seen at once")
struct PolicyFilesTests {
    /// config.toml and a providers directory in a scratch directory, as an environment.
    static func layout(_ scratch: Scratch) throws -> (lookup: @Sendable (String) -> String?, config: String) {
        let config = try scratch.file("config/latchkey/config.toml", "[agent]\nconfirm_timeout = 5\n")
        let providers = try scratch.directory("providers.d")
        let root = scratch.path
        let lookup: @Sendable (String) -> String? = { name in
            switch name {
            case "XDG_CONFIG_HOME": return root + "/config"
            case "LATCHKEY_PROVIDERS_DIR": return providers
            default: return nil
            }
        }
        return (lookup, config)
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
        let (lookup, _) = try Self.layout(scratch)
        let file = try scratch.file("providers.d/a.toml", "confirm = false\n")
        let before = try #require(PolicyFiles.currentFingerprint(ofProvider: "a", lookup))
        var inode = stat()
        stat(file, &inode)
        try Self.rewriteInPlace(file, "confirm = true \n")
        var after = stat()
        stat(file, &after)
        #expect(inode.st_ino == after.st_ino && inode.st_size == after.st_size)
        #expect(PolicyFiles.currentFingerprint(ofProvider: "a", lookup) != before)
    }

    @Test("config.toml and the first directory holding the provider's file count; a later directory's does not")
    func whichFiles() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (_, config) = try Self.layout(scratch)
        let directories = [try scratch.directory("first"), try scratch.directory("second")]
        func fingerprint() -> String? {
            PolicyFiles.fingerprint(
                ofProvider: "a", configIdentity: PolicyFiles.identity(of: config), directories: directories,
                identity: { PolicyFiles.identity(of: $0) })
        }
        let missing = try #require(fingerprint())
        #expect(missing.hasSuffix("|-|-"), "absent from both directories")
        try scratch.file("second/a.toml", "forward = true\n")
        let second = try #require(fingerprint())
        #expect(second.hasPrefix(try #require(PolicyFiles.identity(of: config)) + "|-|") && !second.hasSuffix("|-"))
        let first = try scratch.file("first/a.toml", "forward = false\n")
        let both = try #require(fingerprint())
        #expect(both != second && both.split(separator: "|").count == 2, "the search stops at the file read")
        try Self.rewriteInPlace(config, "[agent]\nconfirm_timeout = 6\n")
        #expect(fingerprint() != both)
        unlink(first)
        #expect(fingerprint()?.split(separator: "|").count == 3)
    }

    @Test("a snapshot gives the fingerprint the launcher computes while nothing changed, and none while a file has not settled")
    func snapshot() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (lookup, config) = try Self.layout(scratch)
        try scratch.file("providers.d/a.toml", "confirm = true\n")
        usleep(useconds_t(PolicyFiles.settleTime / 1_000 + 1_000))
        let snapshot = PolicySnapshot(lookup)
        #expect(snapshot.isSettled && snapshot.matches(PolicySnapshot(lookup)))
        let configIdentity = PolicyFiles.identity(of: config)
        #expect(
            snapshot.fingerprint(ofProvider: "a", configIdentity: configIdentity) == PolicyFiles.currentFingerprint(ofProvider: "a", lookup)
        )
        #expect(
            snapshot.fingerprint(ofProvider: "b", configIdentity: configIdentity) == PolicyFiles.currentFingerprint(ofProvider: "b", lookup)
        )

        try scratch.file("providers.d/a.toml", "confirm = false\n")
        let fresh = PolicySnapshot(lookup)
        #expect(!fresh.isSettled && !fresh.matches(fresh), "changed just now: read again until it settles")
        #expect(fresh.fingerprint(ofProvider: "a", configIdentity: configIdentity) == nil)
        #expect(!snapshot.matches(fresh))
    }
}
