import LatchkeyCrypto
import Testing

@testable import LatchkeyVault

/// The vault's own SHA-256, HMAC-SHA256 and ChaCha20-Poly1305 (LatchkeyVault/VaultCrypto.swift):
/// FIPS 180 and RFC 4231 vectors, RFC 8439's ChaCha20 block (§2.3.2), Poly1305 (§2.5.2 and
/// Appendix A.3's edge cases of the final reduction) and AEAD (§2.8.2) vectors, then the same
/// inputs of many lengths through OpenSSL (LatchkeyCrypto), which must agree byte for byte.
@Suite("The vault's own primitives (VaultCrypto) against the RFCs and OpenSSL")
struct VaultCryptoTests {
    @Test("SHA-256 of FIPS 180's messages, and of a million 'a's fed in pieces across block boundaries")
    func sha256() {
        #expect(
            Vectors.hex(VaultCrypto.SHA256.hash(Vectors.ascii("abc"))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(
            Vectors.hex(VaultCrypto.SHA256.hash(Vectors.ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Vectors.hex(VaultCrypto.SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        var hash = VaultCrypto.SHA256()
        var fed = 0
        var size = 1
        while fed < 1_000_000 {
            let piece = min(size, 1_000_000 - fed)
            hash.update([UInt8](repeating: UInt8(ascii: "a"), count: piece))
            fed += piece
            size = size * 7 % 1000 + 1
        }
        let copy = hash
        #expect(Vectors.hex(hash.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(copy.finalize() == hash.finalize(), "finalize leaves the hash as it was")
    }

    @Test("HMAC-SHA256 of RFC 4231's test cases 1, 2, 6 and 7 (keys of 20, 4 and 131 bytes)")
    func hmac() {
        func mac(_ key: [UInt8], _ message: String) -> String {
            key.withUnsafeBytes { Vectors.hex(VaultCrypto.hmacSHA256(key: $0, message: Vectors.ascii(message))) }
        }
        #expect(mac([UInt8](repeating: 0x0B, count: 20), "Hi There") == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            mac(Vectors.ascii("Jefe"), "what do ya want for nothing?") == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        )
        let long = [UInt8](repeating: 0xAA, count: 131)
        #expect(
            mac(long, "Test Using Larger Than Block-Size Key - Hash Key First")
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(
            mac(
                long,
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
            ) == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    @Test("the ChaCha20 block function of RFC 8439 §2.3.2")
    func chacha20Block() {
        let key = [UInt8](0..<32)
        let nonce = Vectors.hex("00 00 00 09 00 00 00 4a 00 00 00 00")
        var output = [UInt8](repeating: 0, count: 64)
        key.withUnsafeBytes { key in
            nonce.withUnsafeBytes { nonce in
                output.withUnsafeMutableBytes {
                    VaultCrypto.ChaCha20Poly1305.block(key: key, counter: 1, nonce: nonce, into: $0.baseAddress!)
                }
            }
        }
        #expect(
            Vectors.hex(output)
                == "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4ed2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
        )
    }

    @Test(
        "Poly1305 of RFC 8439 §2.5.2 and of Appendix A.3's vectors #5 to #11, which take the final reduction through its edge cases",
        arguments: [
            (
                "85d6be7857556d337f4452fe42d506a8", "0103808afb0db2fd4abff6af4149f51b",
                Vectors.hex(Vectors.ascii("Cryptographic Forum Research Group")),
                "a8061dc1305136c6c22b8baf0c0127a9"
            ),
            (
                "02" + String(repeating: "00", count: 15), String(repeating: "00", count: 16), String(repeating: "ff", count: 16),
                "03" + String(repeating: "00", count: 15)
            ),
            (
                "02" + String(repeating: "00", count: 15), String(repeating: "ff", count: 16), "02" + String(repeating: "00", count: 15),
                "03" + String(repeating: "00", count: 15)
            ),
            (
                "01" + String(repeating: "00", count: 15), String(repeating: "00", count: 16),
                String(repeating: "ff", count: 16) + "f0" + String(repeating: "ff", count: 15) + "11" + String(repeating: "00", count: 15),
                "05" + String(repeating: "00", count: 15)
            ),
            (
                "01" + String(repeating: "00", count: 15), String(repeating: "00", count: 16),
                String(repeating: "ff", count: 16) + "fb" + String(repeating: "fe", count: 15) + String(repeating: "01", count: 16),
                String(repeating: "00", count: 16)
            ),
            (
                "02" + String(repeating: "00", count: 15), String(repeating: "00", count: 16), "fd" + String(repeating: "ff", count: 15),
                "fa" + String(repeating: "ff", count: 15)
            ),
            (
                "01000000000000000400000000000000", String(repeating: "00", count: 16),
                "e33594d7505e43b900000000000000003394d7505e4379cd010000000000000000000000000000000000000000000000"
                    + "01000000000000000000000000000000",
                "14000000000000005500000000000000"
            ),
            (
                "01000000000000000400000000000000", String(repeating: "00", count: 16),
                "e33594d7505e43b900000000000000003394d7505e4379cd010000000000000000000000000000000000000000000000",
                "13000000000000000000000000000000"
            ),
        ])
    func poly1305(r: String, s: String, message: String, tag: String) {
        var mac = VaultCrypto.Poly1305(key: Vectors.hex(r + s))
        Vectors.hex(message).withUnsafeBytes { mac.update($0, padded: false) }
        #expect(Vectors.hex(mac.finalize()) == tag)
    }

    @Test("RFC 8439 §2.8.2's AEAD vector seals and opens; a changed byte, other associated data or another key do not open")
    func aead() throws {
        let key = try #require(VaultKey(bytes: Vectors.hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")))
        let nonce = SymmetricCipherTests.nonce
        let sealed = VaultCrypto.ChaCha20Poly1305.seal(
            SymmetricCipherTests.plaintext, key: key, nonce: nonce, authenticating: SymmetricCipherTests.aad)
        #expect(sealed == SymmetricCipherTests.ciphertext + SymmetricCipherTests.tag)
        #expect(
            try VaultCrypto.ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: SymmetricCipherTests.aad)
                == SymmetricCipherTests.plaintext)
        for index in [0, 57, sealed.count - 17, sealed.count - 16, sealed.count - 1] {
            var changed = sealed
            changed[index] ^= 0x80
            #expect(throws: VaultCrypto.ChaCha20Poly1305.AuthenticationFailure.self) {
                try VaultCrypto.ChaCha20Poly1305.open(changed, key: key, nonce: nonce, authenticating: SymmetricCipherTests.aad)
            }
        }
        #expect(throws: VaultCrypto.ChaCha20Poly1305.AuthenticationFailure.self) {
            try VaultCrypto.ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: SymmetricCipherTests.aad.dropLast())
        }
        let other = try #require(VaultKey(bytes: [UInt8](repeating: 1, count: 32)))
        #expect(throws: VaultCrypto.ChaCha20Poly1305.AuthenticationFailure.self) {
            try VaultCrypto.ChaCha20Poly1305.open(sealed, key: other, nonce: nonce, authenticating: SymmetricCipherTests.aad)
        }
        #expect(throws: VaultCrypto.ChaCha20Poly1305.AuthenticationFailure.self) {
            try VaultCrypto.ChaCha20Poly1305.open(Array(sealed.suffix(15)), key: key, nonce: nonce, authenticating: [])
        }
        #expect(VaultKey(bytes: [UInt8](repeating: 1, count: 31)) == nil)
    }

    static let lengths = [0, 1, 15, 16, 17, 55, 56, 63, 64, 65, 127, 128, 129, 1000, 4096, 70_001]

    @Test("seal here, open with OpenSSL, and the other way round, for messages and associated data of many lengths")
    func agreesWithOpenSSLOnChaChaPoly() throws {
        for (index, length) in Self.lengths.enumerated() {
            let keyBytes = CryptoLibrary.randomBytes(32)
            let key = try #require(VaultKey(bytes: keyBytes))
            let openSSLKey = SymmetricKey(data: keyBytes)
            let message = CryptoLibrary.randomBytes(length)
            let aad = CryptoLibrary.randomBytes([0, 1, 12, 16, 17, 54, 200][index % 7])
            let nonce = CryptoLibrary.randomBytes(12)
            let ours = VaultCrypto.ChaCha20Poly1305.seal(message, key: key, nonce: nonce, authenticating: aad)
            let theirs = try ChaChaPoly.seal(message, using: openSSLKey, nonce: try ChaChaPoly.Nonce(data: nonce), authenticating: aad)
            #expect(nonce + ours == Array(theirs.combined), "length \(length)")
            #expect(
                Array(try ChaChaPoly.open(try ChaChaPoly.SealedBox(combined: nonce + ours), using: openSSLKey, authenticating: aad))
                    == message)
            #expect(
                try VaultCrypto.ChaCha20Poly1305.open(Array(theirs.combined.dropFirst(12)), key: key, nonce: nonce, authenticating: aad)
                    == message)
        }
    }

    @Test("SHA-256 and HMAC-SHA256 agree with OpenSSL's for inputs and keys of many lengths")
    func agreesWithOpenSSLOnHashes() {
        for length in Self.lengths {
            let message = CryptoLibrary.randomBytes(length)
            #expect(VaultCrypto.SHA256.hash(message) == Array(LatchkeyCrypto.SHA256.hash(data: message)), "length \(length)")
            let key = CryptoLibrary.randomBytes(length % 200)
            #expect(
                key.withUnsafeBytes { VaultCrypto.hmacSHA256(key: $0, message: message) }
                    == Array(HMAC<LatchkeyCrypto.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))),
                "key \(key.count) bytes, message \(length)")
        }
    }

    @Test("a vault file sealed here is header ‖ nonce ‖ ciphertext ‖ tag, which OpenSSL opens with the header as associated data")
    func vaultFileLayout() throws {
        let keyBytes = CryptoLibrary.randomBytes(32)
        let key = try #require(VaultKey(bytes: keyBytes))
        let header = VaultFormat.Header(
            version: VaultFormat.currentVersion, kdf: .standard, salt: CryptoLibrary.randomBytes(16),
            keyCheck: VaultFormat.keyCheck(for: key))
        let records = Vectors.ascii(#"{"accounts":[]}"#)
        let file = VaultFormat.seal(records, header: header, key: key)
        let parsed = try VaultFormat.parse(file)
        #expect(parsed.headerBytes == header.encoded() && parsed.sealed.count == 12 + records.count + 16)
        let box = try ChaChaPoly.SealedBox(combined: parsed.sealed)
        #expect(Array(try ChaChaPoly.open(box, using: SymmetricKey(data: keyBytes), authenticating: parsed.headerBytes)) == records)
        #expect(try VaultFormat.open(sealed: parsed.sealed, headerBytes: parsed.headerBytes, key: key) == records)
        #expect(
            VaultFormat.seal(records, header: header, key: key).suffix(from: 54).prefix(12) != file.suffix(from: 54).prefix(12),
            "a new nonce")
        #expect(
            VaultFormat.keyCheck(for: key)
                == Array(
                    HMAC<LatchkeyCrypto.SHA256>.authenticationCode(
                        for: Vectors.ascii("latchkey vault key check"), using: SymmetricKey(data: keyBytes)
                    ).prefix(16)))
    }
}
