import Foundation
import LatchkeyEssentials
import LatchkeyTestSupport
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyProviders
@testable import LatchkeyVault

@Suite("The openbao keystore's copies are never made from a read older than theirs")
struct CopiesVersionsTests {
    static func kept(_ directory: TemporaryDirectory) -> [String: Int] {
        CopiesVersions.parse((try? String(contentsOfFile: directory.path + "/openbao-copies.versions", encoding: .utf8)) ?? "")
    }

    @Test("a read as new or newer makes the copies and keeps its versions; one older in any account does not, whatever else it has")
    func olderInAnyAccountIsOlder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let versions = CopiesVersions(path: directory.path + "/openbao-copies.versions")
        var made = 0
        #expect(versions.unlessOlder(["a": 2, "b": 1]) { made += 1 })
        #expect(versions.unlessOlder(["a": 2, "b": 1]) { made += 1 }, "as new")
        #expect(!versions.unlessOlder(["a": 1, "b": 1]) { made += 1 }, "older")
        #expect(!versions.unlessOlder(["a": 3, "b": 0]) { made += 1 }, "newer in one account, older in the other")
        #expect(!versions.unlessOlder(["a": 3]) { made += 1 }, "an account it did not see is older than one seen")
        #expect(made == 2 && Self.kept(directory) == ["a": 2, "b": 1])
        #expect(versions.unlessOlder(["a": 3, "b": 2, "c": 1]) { made += 1 })
        #expect(made == 3 && Self.kept(directory) == ["a": 3, "b": 2, "c": 1])
        let mode = try FileManager.default.attributesOfItem(atPath: directory.path + "/openbao-copies.versions")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("a line cut short is skipped, and a file that cannot be opened does not stop the copies")
    func damagedOrMissingFile() throws {
        #expect(CopiesVersions.parse("a 2\nb 1\nc\nd x\ne 4") == ["a": 2, "b": 1, "e": 4])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/a-directory", withIntermediateDirectories: false)
        var made = false
        #expect(CopiesVersions(path: directory.path + "/a-directory").unlessOlder(["a": 1]) { made = true } && made)
    }

    @Test(
        "a records() read older than the copies there reads again, three reads at most, and leaves them; a newer one makes them",
        .enabled(if: kernelKeyringWorks, "no kernel keyring here"))
    func keystoreReadsAgain() async throws {
        let engine = OpenBaoKVEngine()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = directory.path + "/openbao.journal"
        let copies = LauncherCopies(origin: .openBao(journal: journal), releasePolicy: nil, directories: nil)
        defer { copies.lock() }
        let keystore = OpenBaoKeystore(
            settings: OpenBaoSettings(addresses: [URL(string: "http://127.0.0.1:8200")!], path: "team"), transport: engine,
            environment: ["BAO_TOKEN": "s.keystoretest"], journalPath: journal, launcherCopies: copies, pause: { _ in })
        let alice = OpenBaoKeystoreTests.record("alice")
        let name = OpenBaoKeystore.name(of: alice)
        try await keystore.update { $0 = [alice] }
        _ = try await copies.unlock(for: 60) { _ = try await keystore.records() }
        #expect(Self.kept(directory) == [name: 1])

        // Another command read alice at version 5 and made its copies meanwhile.
        try directory.write("openbao-copies.versions", "\(name) 5\n")
        let lists = { engine.requests.filter { $0.hasSuffix("/team/accounts?list=true") }.count }
        let before = lists()
        #expect(try await keystore.records() == [alice], "the caller still gets what was read")
        #expect(lists() == before + 3 && Self.kept(directory) == [name: 5])

        for _ in 0..<5 { engine.put("team/accounts/" + name, try #require(engine.secret("team/accounts/" + name)?.data)) }
        _ = try await keystore.records()
        #expect(lists() == before + 4 && Self.kept(directory) == [name: 6])
    }
}
