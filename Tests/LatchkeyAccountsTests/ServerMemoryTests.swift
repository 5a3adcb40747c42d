import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyOAuth
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// What servers said, kept from one run to the next (`ServerMemory`): discovery documents and
/// DPoP nonces, and the directory that keeps them between processes.
@Suite("Discovery documents and DPoP nonces remembered between runs")
struct ServerMemoryTests {
    static let discovery = #""code_challenge_methods_supported":["S256"]"#

    @Test("a sign-in fetches the discovery document; later refreshes, in later runs, fetch none")
    func discoveryRemembered() async throws {
        let server = FakeAuthorizationServer(discovery: Self.discovery)
        let keystore = InMemoryKeystore()
        _ = try await server.service(keystore: keystore).signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        for _ in 0..<3 { _ = try await server.service(keystore: keystore).refresh(AccountSelector(provider: "corp")) }
        #expect(server.transport.sent(to: "/.well-known/openid-configuration").count == 1)
        #expect(server.transport.sent(to: "/token").count == 4)
        // A person signing in again gets a fresh document, which corrects a stale one.
        _ = try await server.service(keystore: keystore).signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(server.transport.sent(to: "/.well-known/openid-configuration").count == 2)
    }

    @Test("a remembered document whose token endpoint is gone is fetched again and the refresh goes on at the new endpoint")
    func movedEndpointRefetched() async throws {
        let server = FakeAuthorizationServer(discovery: Self.discovery)
        let keystore = InMemoryKeystore()
        _ = try await server.service(keystore: keystore).signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let url = try #require(ServerMetadata.discoveryURL(for: server.provider.asOAuth))
        let stale = """
            {"issuer":"https://corp.example","authorization_endpoint":"https://corp.example/authorize",\
            "token_endpoint":"https://corp.example/old-token","jwks_uri":"https://corp.example/jwks"}
            """
        server.memory.remember(discovery: Array(stale.utf8), at: url, now: server.clock.now())
        server.transport.route("/old-token") { _ in .failure(.unreachable(host: "corp.example", reason: "connection refused")) }
        let refreshed = try await server.service(keystore: keystore).refresh(AccountSelector(provider: "corp"))
        #expect(refreshed.accessToken.exposedValue == "access-2")
        #expect(server.transport.sent(to: "/old-token").count == 1 && server.transport.sent(to: "/token").count == 2)
        #expect(server.transport.sent(to: "/.well-known/openid-configuration").count == 2)
    }

    @Test("a server that demands DPoP nonces costs one round trip per refresh once its nonce is remembered")
    func nonceRemembered() async throws {
        let server = FakeAuthorizationServer(discovery: #""dpop_signing_alg_values_supported":["ES256"]"#)
        server.requireDPoPNonce("server-nonce-1")
        let keystore = InMemoryKeystore()
        _ = try await server.service(keystore: keystore).signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(server.transport.sent(to: "/token").count == 2)
        _ = try await server.service(keystore: keystore).refresh(AccountSelector(provider: "corp"))
        let attempts = server.transport.sent(to: "/token")
        #expect(attempts.count == 3)
        #expect(FakeAuthorizationServer.claims(ofJWT: attempts[2].header("DPoP") ?? "")?["nonce"] as? String == "server-nonce-1")
    }

    @Test("the directory keeps a document a day and a nonce per origin; another user's file, or a directory others can write, is no memory")
    func directoryMemory() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-memory-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        let memory = ServerMemoryDirectory(directory: base + "/servers")
        let url = try #require(URL(string: "https://corp.example/.well-known/openid-configuration"))
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        memory.remember(discovery: Array(#"{"issuer":"https://corp.example"}"#.utf8), at: url, now: now)
        #expect(memory.discovery(at: url, now: now.addingTimeInterval(3600)) == Array(#"{"issuer":"https://corp.example"}"#.utf8))
        #expect(memory.discovery(at: url, now: now.addingTimeInterval(DiscoveryDocument.keptFor + 1)) == nil)
        #expect(memory.discovery(at: url, now: now.addingTimeInterval(-60)) == nil, "a document from the future is not believed")
        let token = try #require(URL(string: "https://corp.example:443/token"))
        memory.remember(nonce: "n-1", for: token)
        #expect(memory.nonce(for: try #require(URL(string: "https://CORP.example/other"))) == "n-1")
        #expect(memory.nonce(for: try #require(URL(string: "https://corp.example:8443/token"))) == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: base + "/servers")
        #expect(files.count == 2)
        for file in files {
            #expect(try FileManager.default.attributesOfItem(atPath: base + "/servers/" + file)[.posixPermissions] as? Int == 0o600)
        }
        if geteuid() == 0 {
            for file in files { #expect(chown(base + "/servers/" + file, 65534, 65534) == 0) }
            #expect(memory.discovery(at: url, now: now) == nil && memory.nonce(for: token) == nil)
            for file in files { #expect(chown(base + "/servers/" + file, 0, 0) == 0) }
        }
        #expect(chmod(base + "/servers", 0o777) == 0)
        #expect(memory.discovery(at: url, now: now) == nil && memory.nonce(for: token) == nil)
    }
}
