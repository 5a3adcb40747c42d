import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeySupport
@testable import LatchkeyVault

/// A vault written by Latchkey when its cryptography was swift-crypto (BoringSSL), kept so every
/// later build proves it still opens what people already have on disk: scrypt with the standard
/// cost, the HMAC-SHA256 key check, the ChaCha20-Poly1305 box (nonce ‖ ciphertext ‖ tag), and a
/// DPoP key stored as its raw P-256 scalar.
///
/// `vault-swift-crypto.bin` holds one DPoP-bound account; `vault-swift-crypto-proof.jwt` is a
/// proof swift-crypto signed with that account's key.
@Suite("A vault written by the swift-crypto build")
struct SwiftCryptoVaultFixtureTests {
    static let passphrase = "swift-crypto fixture passphrase"
    /// The stored key's JWK thumbprint (RFC 7638), as swift-crypto computed it.
    static let thumbprint = "A98TAw9EC4RnGX8jzTcni0ckcwyK0dyl0s4WClZlLLs"

    /// The fixture copied into a private directory (the vault refuses a file others can read).
    static func openedRecords() async throws -> [AccountRecord] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("vault", bytes: try fixtures.bytes("vault-swift-crypto.bin"))
        let vault = VaultKeystore(path: path, passphrase: FixedPassphrase(value: passphrase), kdf: .standard)
        return try await vault.records()
    }

    @Test("it opens with its passphrase, and its one record reads back whole")
    func opens() async throws {
        let records = try await Self.openedRecords()
        try #require(records.count == 1)
        let record = records[0]
        #expect(record.provider == "dpop-fixture" && record.subject == "fixture-subject-1")
        #expect(record.accessToken.exposedValue == "fixture-access-token" && record.tokenType == "DPoP")
        #expect(record.refreshToken?.exposedValue == "fake-refresh-token" && record.scopes == ["openid", "email"])
        #expect(record.isProofBound)
    }

    @Test("a wrong passphrase is told apart by the key check")
    func wrongPassphrase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("vault", bytes: try fixtures.bytes("vault-swift-crypto.bin"))
        let vault = VaultKeystore(path: path, passphrase: FixedPassphrase(value: "not the passphrase"), kdf: .standard)
        await #expect(throws: KeystoreError.self) { _ = try await vault.records() }
    }

    @Test("its DPoP key loads, has the thumbprint it had, and signs a proof that verifies under its JWK")
    func dpopKeySigns() async throws {
        let stored = try #require(try await Self.openedRecords().first?.dpopKey)
        let key = try DPoPKey(stored: stored)
        #expect(key.thumbprint == Self.thumbprint)
        #expect(key.stored.exposedValue == stored.exposedValue, "the scalar writes back as it was read")
        let proof = key.proof(method: "POST", url: try #require(URL(string: "https://as.example/token")), at: Date())
        #expect(Self.verifies(proof, under: key))
    }

    @Test("the proof swift-crypto signed with that key verifies")
    func swiftCryptoProofVerifies() async throws {
        let stored = try #require(try await Self.openedRecords().first?.dpopKey)
        let proof = try fixtures.text("vault-swift-crypto-proof.jwt").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Self.verifies(proof, under: try DPoPKey(stored: stored)))
    }

    /// Whether `proof`'s ES256 signature (R ‖ S, RFC 7518 §3.4) verifies under `key`'s public half.
    static func verifies(_ proof: String, under key: DPoPKey) -> Bool {
        let parts = proof.split(separator: ".").map(String.init)
        guard parts.count == 3, let signature = Base64URL.decode(parts[2]),
            let x = Base64URL.decode(key.publicJWK.x), let y = Base64URL.decode(key.publicJWK.y),
            let publicKey = try? P256.Signing.PublicKey(rawRepresentation: x + y),
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return publicKey.isValidSignature(ecdsa, for: Array((parts[0] + "." + parts[1]).utf8))
    }
}
