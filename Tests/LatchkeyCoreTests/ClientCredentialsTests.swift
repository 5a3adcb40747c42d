import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCore
@testable import LatchkeyVault

/// Machine identities (RFC 6749 §4.4): the secret file's checks (shared with
/// `LATCHKEY_PASSPHRASE_FILE`) and the grant's request.
@Suite("Client credentials")
struct ClientCredentialsTests {
    func secretFile(_ text: String, mode: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-secret-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test("the secret file is read without its line ending, and refused when others can read it or it is empty")
    func secretFileChecks() throws {
        let good = try secretFile("s3cret\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: good) }
        #expect(try SecretFile.read(good).exposedValue == "s3cret")
        let open = try secretFile("s3cret\n", mode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: open) }
        do {
            _ = try SecretFile.read(open)
            Issue.record("a 0644 secret file was read")
        } catch {
            #expect(error.reason.contains("chmod 600") && !error.reason.contains("s3cret"))
        }
        let empty = try secretFile("\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(throws: SecretFile.Unusable.self) { try SecretFile.read(empty) }
    }

    @Test("the grant sends client_credentials, the client's secret and its scopes without openid, and names the account after the client")
    func grant() async throws {
        let path = try secretFile("s3cret", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var choices = ProtocolChoices()
        choices.grant = .clientCredentials
        choices.clientSecretFile = path
        let server = FakeAuthorizationServer(choices: choices)
        server.transport.route("/token", json: #"{"access_token":"machine-1","token_type":"Bearer","expires_in":300}"#)
        let keystore = InMemoryKeystore()
        let (record, _) = try await server.service(keystore: keystore).signIn(
            provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let form = try #require(server.transport.sent(to: "/token").first).form
        #expect(form["grant_type"] == "client_credentials" && form["client_secret"] == "s3cret" && form["scope"] == "email")
        #expect(record.subject == "client-corp" && record.accessToken.exposedValue == "machine-1" && record.refreshToken == nil)
        #expect(server.browser.urls.isEmpty)
        #expect(try await keystore.records().count == 1)
    }
}
