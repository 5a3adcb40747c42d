import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// Machine identities (RFC 6749 §4.4): the secret file's checks (shared with
/// `LATCHKEY_PASSPHRASE_FILE`), the grant's request, and `private_key_jwt` assertions (RFC 7523).
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

    @Test(
        "a secret file is checked on the descriptor it is read from: a FIFO does not block, another user's file and a huge one are refused")
    func secretFileCheckedWhereRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-secrets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: SecretFile.Unusable.self) { try SecretFile.read(fifo) }
        let huge = try secretFile(String(repeating: "x", count: SecretFile.largestSize + 1), mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: huge) }
        #expect { try SecretFile.read(huge) } throws: { ($0 as? SecretFile.Unusable)?.reason.contains("more than such a file has") == true }
        // Reached through a link (Kubernetes mounts secrets so), the file itself is what is checked.
        let target = try secretFile("s3cret", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: target) }
        try FileManager.default.createSymbolicLink(atPath: directory + "/link", withDestinationPath: target)
        #expect(try SecretFile.read(directory + "/link").exposedValue == "s3cret")
        if geteuid() == 0 {
            let others = try secretFile("s3cret", mode: 0o600)
            defer { try? FileManager.default.removeItem(atPath: others) }
            #expect(chown(others, 65534, 65534) == 0)
            #expect { try SecretFile.read(others) } throws: { ($0 as? SecretFile.Unusable)?.reason.contains("another user") == true }
        }
    }

    /// A FakeAuthorizationServer whose provider is a machine identity with the secret `s3cret`
    /// in a 0600 file, its token endpoint answering `machine-1`.
    func secretServer() throws -> (FakeAuthorizationServer, path: String) {
        let path = try secretFile("s3cret", mode: 0o600)
        var choices = ProtocolChoices()
        choices.grant = .clientCredentials
        choices.clientSecretFile = path
        let server = FakeAuthorizationServer(choices: choices)
        server.transport.route("/token", json: #"{"access_token":"machine-1","token_type":"Bearer","expires_in":300}"#)
        return (server, path)
    }

    @Test("the grant sends client_credentials, the client's secret and its scopes without openid, and names the account after the client")
    func grant() async throws {
        let (server, path) = try secretServer()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let keystore = InMemoryKeystore()
        let (record, _) = try await server.service(keystore: keystore).signIn(
            provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let form = try #require(server.transport.sent(to: "/token").first).form
        #expect(form["grant_type"] == "client_credentials" && form["client_secret"] == "s3cret" && form["scope"] == "email")
        #expect(record.subject == "client-corp" && record.accessToken.exposedValue == "machine-1" && record.refreshToken == nil)
        #expect(server.browser.urls.isEmpty)
        #expect(try await keystore.records().count == 1)
    }

    @Test("a machine identity's token for a resource is a client credentials grant naming it, not a refresh it cannot make")
    func narrowedByGrant() async throws {
        let (server, path) = try secretServer()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore)
        _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let narrowing = TokenNarrowing(resource: "https://api.example.com/", scopes: [])
        let token = try await service.narrowedToken(for: AccountSelector(provider: "corp"), narrowing, minimumLifetime: 60)
        #expect(token.accessToken.exposedValue == "machine-1" && token.resource == "https://api.example.com/")
        let form = try #require(server.transport.sent(to: "/token").last).form
        #expect(form["grant_type"] == "client_credentials" && form["resource"] == "https://api.example.com/" && form["scope"] == "email")
        #expect(form["refresh_token"] == nil && form["client_secret"] == "s3cret")
        #expect(server.transport.sent(to: "/token").count == 2)
    }

    @Test("a machine account whose provider file now names another client is kept, not replaced, when refreshed")
    func clientChangedSinceSignIn() async throws {
        let (server, path) = try secretServer()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore)
        _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        // Signed in under the client the provider file named before it was edited.
        try await keystore.update { $0[0].subject = "client-before" }
        await #expect(throws: RefreshError.identityChanged) { try await service.refresh(AccountSelector(provider: "corp")) }
        let kept = try await keystore.records()
        #expect(kept.map(\.subject) == ["client-before"] && kept[0].lastError?.contains("different account") == true)
    }

    /// A FakeAuthorizationServer whose provider signs in with the key `pem` in a 0600 file.
    func keyServer(pem: String, keyID: String?) throws -> (FakeAuthorizationServer, path: String) {
        let path = try secretFile(pem, mode: 0o600)
        var choices = ProtocolChoices()
        choices.grant = .clientCredentials
        choices.privateKeyFile = path
        choices.privateKeyID = keyID
        let server = FakeAuthorizationServer(choices: choices)
        server.transport.route("/token", json: #"{"access_token":"machine-1","token_type":"Bearer","expires_in":300}"#)
        return (server, path)
    }

    /// The header, the claims and whether `verify` accepts the signature, of each assertion sent.
    func assertions(_ server: FakeAuthorizationServer, verify: (Data, [UInt8]) -> Bool) throws -> [(
        header: [String: Any], claims: [String: Any], verified: Bool
    )] {
        try server.transport.sent(to: "/token").map { request in
            let form = request.form
            #expect(form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            #expect(form["client_secret"] == nil && form["client_id"] == "client-corp")
            let parts = try #require(form["client_assertion"]).split(separator: ".").map(String.init)
            try #require(parts.count == 3)
            let headerJSON = try #require(Base64URL.decode(parts[0]))
            let header = try #require(try JSONSerialization.jsonObject(with: Data(headerJSON)) as? [String: Any])
            let signature = try #require(Base64URL.decode(parts[2]))
            return (
                header, FakeAuthorizationServer.claims(ofJWT: parts.joined(separator: ".")) ?? [:],
                verify(Data((parts[0] + "." + parts[1]).utf8), Array(signature))
            )
        }
    }

    @Test("private_key_jwt: each grant sends a new ES256 assertion from the client to the token endpoint, with the kid, living 60 s")
    func privateKeyJWT() async throws {
        let key = P256.Signing.PrivateKey()
        let (server, path) = try keyServer(pem: key.pemRepresentation, keyID: "ci-1")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let service = server.service(keystore: InMemoryKeystore())
        for _ in 0..<2 { _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel }) }
        let sent = try assertions(server) { input, signature in
            guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.publicKey.isValidSignature(ecdsa, for: input)
        }
        try #require(sent.count == 2)
        let now = Int(server.clock.now().timeIntervalSince1970)
        for (header, claims, verified) in sent {
            #expect(verified)
            #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "ci-1")
            #expect(claims["iss"] as? String == "client-corp" && claims["sub"] as? String == "client-corp")
            #expect(claims["aud"] as? String == "https://corp.example/token")
            #expect(claims["iat"] as? Int == now && claims["exp"] as? Int == now + 60)
        }
        let ids = sent.compactMap { $0.claims["jti"] as? String }
        #expect(ids.count == 2 && ids[0] != ids[1] && ids.allSatisfy { $0.count >= 16 })
    }

    @Test("private_key_jwt with an RSA key signs RS256 that verifies under its public key, and without private_key_id sends no kid")
    func privateKeyJWTWithRSA() async throws {
        let key = try RSA.Signing.PrivateKey(keySize: .bits2048)
        let (server, path) = try keyServer(pem: key.pemRepresentation, keyID: nil)
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try await server.service(keystore: InMemoryKeystore()).signIn(
            provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let sent = try assertions(server) { input, signature in
            key.publicKey.isValidSignature(
                RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        }
        let (header, _, verified) = try #require(sent.first)
        #expect(verified && header["alg"] as? String == "RS256" && header["kid"] == nil)
    }

    @Test("a key file others can read, or one holding no usable key, is refused before anything is sent, without its content")
    func unusableKeyFile() async throws {
        let key = P256.Signing.PrivateKey().pemRepresentation
        for (text, mode, expected) in [(key, 0o640, "chmod 600"), ("not a key at all", 0o600, "no PEM private key")] {
            let (server, path) = try keyServer(pem: text, keyID: nil)
            defer { try? FileManager.default.removeItem(atPath: path) }
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            do {
                _ = try await server.service(keystore: InMemoryKeystore()).signIn(
                    provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
                Issue.record("an unusable key file was used")
            } catch let error as ClientCredentialsError {
                #expect(error.description.contains("private_key_file") && error.description.contains(expected), "\(error)")
                #expect(!error.description.contains("PRIVATE KEY") && !error.description.contains("not a key at all"))
            }
            #expect(server.transport.sent(to: "/token").isEmpty)
        }
    }

    // MARK: - DPoP

    /// The public key (`jwk`'s `x`) of each DPoP proof sent to the token endpoint, `nil` for a
    /// request without one.
    func proofKeys(_ server: FakeAuthorizationServer) -> [String?] {
        server.transport.sent(to: "/token").map { request in request.header("DPoP").flatMap(Self.publicKey(ofProof:)) }
    }

    static func publicKey(ofProof proof: String) -> String? {
        (FakeAuthorizationServer.header(ofJWT: proof)?["jwk"] as? [String: Any])?["x"] as? String
    }

    @Test("with dpop, the grant carries a proof of the machine's key, kept in the vault and proved again by the next grant")
    func boundMachine() async throws {
        let path = try secretFile("s3cret", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var choices = ProtocolChoices(proofOfPossession: .always)
        choices.grant = .clientCredentials
        choices.clientSecretFile = path
        let server = FakeAuthorizationServer(choices: choices)
        server.transport.route("/token", json: #"{"access_token":"machine-1","token_type":"DPoP","expires_in":300}"#)
        let service = server.service(keystore: InMemoryKeystore())
        let (record, _) = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(record.isProofBound && record.dpopKey != nil)
        let renewed = try await service.refresh(AccountSelector(provider: "corp"))
        #expect(renewed.dpopKey == record.dpopKey, "the same key from grant to grant")
        let keys = proofKeys(server)
        #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1])
        let proof = try service.proof(
            for: renewed, token: renewed.accessToken, method: "GET", url: URL(string: "https://api.example/")!, nonce: nil)
        #expect(Self.publicKey(ofProof: proof) == keys[0])
    }

    @Test("with dpop auto at a server that answers bearer, no key is kept and the account is not shown bound")
    func unboundMachine() async throws {
        let path = try secretFile("s3cret", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var choices = ProtocolChoices(proofOfPossession: .auto)
        choices.grant = .clientCredentials
        choices.clientSecretFile = path
        let server = FakeAuthorizationServer(discovery: FakeAuthorizationServer.advertisesES256, choices: choices)
        server.transport.route("/token", json: #"{"access_token":"machine-1","token_type":"Bearer","expires_in":300}"#)
        let (record, _) = try await server.service(keystore: InMemoryKeystore()).signIn(
            provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(proofKeys(server).first??.isEmpty == false, "the proof was sent")
        #expect(!record.isProofBound && record.dpopKey == nil)
    }

    @Test("private_key_jwt with a DPoP nonce retry signs a new assertion for the second request rather than replaying its jti")
    func nonceRetryNewAssertion() async throws {
        let key = P256.Signing.PrivateKey()
        let (server, path) = try keyServer(pem: key.pemRepresentation, keyID: nil)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let asked = Mutex(false)
        server.transport.route("/token") { _ in
            let first = asked.withLock { asked in
                defer { asked = true }
                return !asked
            }
            let body = first ? #"{"error":"use_dpop_nonce"}"# : #"{"access_token":"machine-1","token_type":"DPoP","expires_in":300}"#
            var headers = [("Content-Type", "application/json")]
            if first { headers.append(("DPoP-Nonce", "n-1")) }
            return .success(HTTPResponse(status: first ? 400 : 200, headers: headers, body: Array(body.utf8)))
        }
        var provider = server.provider
        guard case .oidc(var client) = provider.kind else { throw CancellationError() }
        client.choices.proofOfPossession = .always
        provider.kind = .oidc(client)
        let (record, _) = try await server.service(keystore: InMemoryKeystore(), providers: [provider]).signIn(
            provider: provider, interaction: ScriptedPerson { _, _ in .cancel })
        #expect(record.isProofBound)
        let sent = try assertions(server) { _, _ in true }
        let ids = sent.compactMap { $0.claims["jti"] as? String }
        #expect(ids.count == 2 && ids[0] != ids[1])
    }
}
