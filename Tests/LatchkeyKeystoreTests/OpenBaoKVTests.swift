import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyProviders
@testable import LatchkeySupport
@testable import LatchkeyVault

/// `OpenBaoClient`'s KV version 2 reads and check-and-set writes, against OpenBao's answers as
/// its API documents them (and as openbao_support.py's live server gives them).
@Suite("OpenBao's KV version 2: reads and check-and-set writes")
struct OpenBaoKVTests {
    static let token = Secret("s.kvtesttoken")
    static let path = "/v1/secret/data/team/alice"

    static func client(_ transport: RecordingTransport) -> OpenBaoClient {
        OpenBaoClient(addresses: [URL(string: "https://bao.test.example:8200")!], transport: transport)
    }

    static func readAnswer(data: String = #"{"record":"x"}"#, version: Int = 3) -> String {
        """
        {"request_id":"r","lease_id":"","renewable":false,"lease_duration":0,
         "data":{"data":\(data),"metadata":{"created_time":"2026-11-26T21:00:00Z","custom_metadata":null,"deletion_time":"","destroyed":false,"version":\(version)}}}
        """
    }

    static func read(status: Int = 200, _ body: String) async throws(OpenBaoError) -> KVSecret? {
        let transport = RecordingTransport()
        transport.route(path, status: status, json: body)
        return try await client(transport).read(mount: "secret", path: "team/alice", token: token)
    }

    @Test("a read is GET MOUNT/data/PATH with the token, giving data.data and data.metadata.version")
    func read() async throws {
        let transport = RecordingTransport()
        transport.route(Self.path, status: 200, json: Self.readAnswer())
        let secret = try await Self.client(transport).read(mount: "secret", path: "team/alice", token: Self.token)
        #expect(secret == KVSecret(data: ["record": .string("x")], version: 3))
        let request = try #require(transport.sent.first)
        #expect(request.method == .get && request.header("X-Vault-Token") == "s.kvtesttoken" && request.body == nil)
    }

    @Test("a path never written is nil; a deleted latest version is its number without data, for check-and-set")
    func absentAndDeleted() async throws {
        #expect(try await Self.read(status: 404, #"{"errors":[]}"#) == nil)
        let deleted = try await Self.read(status: 404, Self.readAnswer(data: "null", version: 4))
        #expect(deleted == KVSecret(data: nil, version: 4))
    }

    @Test(
        "reads that are not KV version 2 answers, or are refused, say so",
        arguments: [
            (200, #"{"data":{"record":"x"}}"#, "no data.metadata.version (is the mount KV version 2?)"),
            (200, #"{"data":"x"}"#, "no data object"),
            (200, #"{"data":{"data":[1],"metadata":{"version":1}}}"#, "data.data is not an object"),
            (200, #"{"data":{"data":{},"metadata":{"version":0}}}"#, "no data.metadata.version"),
            (200, #"{"data":{"data":{},"metadata":{"version":true}}}"#, "no data.metadata.version"),
            (404, "not found", "HTTP 404 without OpenBao's errors list"),
            (
                403, #"{"errors":["1 error occurred:\n\t* permission denied\n\n"]}"#,
                "refused reading secret/data/team/alice (HTTP 403): 1 error occurred: * permission denied"
            ),
        ])
    func brokenReads(status: Int, body: String, expected: String) async {
        do {
            _ = try await Self.read(status: status, body)
            Issue.record("read \(body)")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
            #expect(!error.description.contains("\n") && !error.description.contains("\t"))
        }
    }

    @Test("a write is POST MOUNT/data/PATH with data and options.cas, giving the new version")
    func write() async throws {
        let transport = RecordingTransport()
        transport.route(Self.path, status: 200, json: #"{"data":{"created_time":"2026-11-26T21:00:00Z","version":4}}"#)
        let version = try await Self.client(transport).write(
            ["record": "y"], mount: "secret", path: "team/alice", replacing: 3, token: Self.token)
        #expect(version == 4)
        let request = try #require(transport.sent.first)
        #expect(request.method == .post && request.header("X-Vault-Token") == "s.kvtesttoken")
        let body = transport.body(0)
        #expect(body["data"] as? [String: String] == ["record": "y"])
        #expect((body["options"] as? [String: Any])?["cas"] as? Int == 3)
    }

    @Test("a write another writer beat is versionChanged; other refusals and answers without a newer version are not")
    func writeConflicts() async throws {
        let transport = RecordingTransport()
        transport.route(Self.path, status: 400, json: #"{"errors":["check-and-set parameter did not match the current version"]}"#)
        await #expect(throws: OpenBaoError.versionChanged(path: "secret/team/alice", expected: 0)) {
            try await Self.client(transport).write(["record": "y"], mount: "secret", path: "team/alice", replacing: 0, token: Self.token)
        }
        #expect(OpenBaoError.versionChanged(path: "secret/team/alice", expected: 0).category == .unavailable)

        transport.route(Self.path, status: 403, json: #"{"errors":["permission denied"]}"#)
        await #expect(
            throws: OpenBaoError.refused(
                action: "writing secret/data/team/alice", host: "bao.test.example:8200", status: 403, errors: ["permission denied"])
        ) { try await Self.client(transport).write(["record": "y"], mount: "secret", path: "team/alice", replacing: 0, token: Self.token) }

        transport.route(Self.path, status: 200, json: #"{"data":{"version":3}}"#)
        do {
            _ = try await Self.client(transport).write(
                ["record": "y"], mount: "secret", path: "team/alice", replacing: 3, token: Self.token)
            Issue.record("a write that did not make a newer version")
        } catch {
            #expect(error.description.contains("no data.version above 3"), "\(error)")
        }
    }

    @Test("secret paths are OpenBao names joined by /")
    func paths() throws {
        try OpenBaoNames.checkPath("team/accounts/a1b2")
        for path in ["", "/team", "team/", "team//a", "team/../sys", "team/%2e%2e", "team/a b", "team/a?x"] {
            #expect(throws: OpenBaoNameError.self, "\(path)") { try OpenBaoNames.checkPath(path) }
        }
    }
}
