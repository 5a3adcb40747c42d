import Foundation
import LatchkeyCrypto
import Testing

/// ChaCha20-Poly1305 against RFC 8439 §2.8.2, and scrypt against RFC 7914 §12.
@Suite("ChaCha20-Poly1305 (RFC 8439) and scrypt (RFC 7914)")
struct SymmetricCipherTests {
    // MARK: - RFC 8439 §2.8.2

    static let plaintext = Vectors.ascii(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")
    static let aad = Vectors.hex("50 51 52 53 c0 c1 c2 c3 c4 c5 c6 c7")
    static let key = SymmetricKey(data: Vectors.hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"))
    /// The 32-bit constant 07 00 00 00 and the IV 40 … 47.
    static let nonce = Vectors.hex("07 00 00 00 40 41 42 43 44 45 46 47")
    static let ciphertext = Vectors.hex(
        """
        d3 1a 8d 34 64 8e 60 db 7b 86 af bc 53 ef 7e c2 a4 ad ed 51 29 6e 08 fe a9 e2 b5 a7 36 ee 62 d6
        3d be a4 5e 8c a9 67 12 82 fa fb 69 da 92 72 8b 1a 71 de 0a 9e 06 0b 29 05 d6 a5 b6 7e cd 3b 36
        92 dd bd 7f 2d 77 8b 8c 98 03 ae e3 28 09 1b 58 fa b3 24 e4 fa d6 75 94 55 85 80 8b 48 31 d7 bc
        3f f4 de f0 8e 4b 7a 9d e5 76 d2 65 86 ce c6 4b 61 16
        """)
    static let tag = Vectors.hex("1a:e1:0b:59:4f:09:e2:6a:7e:90:2e:cb:d0:60:06:91")

    @Test("sealing RFC 8439 §2.8.2's plaintext gives its ciphertext and tag, combined as nonce ‖ ciphertext ‖ tag")
    func rfc8439Seal() throws {
        let box = try ChaChaPoly.seal(
            Self.plaintext, using: Self.key, nonce: try ChaChaPoly.Nonce(data: Self.nonce), authenticating: Self.aad)
        #expect(Array(box.ciphertext) == Self.ciphertext)
        #expect(Array(box.tag) == Self.tag)
        #expect(Array(box.combined) == Self.nonce + Self.ciphertext + Self.tag, "the layout swift-crypto wrote")
        #expect(box.nonce.withUnsafeBytes { Array($0) } == Self.nonce)
    }

    @Test("RFC 8439 §2.8.2's box opens from its combined form to the plaintext")
    func rfc8439Open() throws {
        let box = try ChaChaPoly.SealedBox(combined: Self.nonce + Self.ciphertext + Self.tag)
        #expect(Array(try ChaChaPoly.open(box, using: Self.key, authenticating: Self.aad)) == Self.plaintext)
    }

    @Test("a box changed anywhere, opened with other associated data or another key, does not open")
    func tampering() throws {
        let sealed = Self.nonce + Self.ciphertext + Self.tag
        for index in [0, 11, 12, 12 + Self.ciphertext.count - 1, sealed.count - 16, sealed.count - 1] {
            var changed = sealed
            changed[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailure) {
                try ChaChaPoly.open(try ChaChaPoly.SealedBox(combined: changed), using: Self.key, authenticating: Self.aad)
            }
        }
        let box = try ChaChaPoly.SealedBox(combined: sealed)
        #expect(throws: CryptoError.authenticationFailure) { try ChaChaPoly.open(box, using: Self.key, authenticating: Self.aad + [0]) }
        #expect(throws: CryptoError.authenticationFailure) {
            try ChaChaPoly.open(box, using: SymmetricKey(size: .bits256), authenticating: Self.aad)
        }
    }

    @Test("sizes: a key of 128 bits, a 27-byte box and an 11-byte nonce are refused; an empty message seals to a bare tag")
    func sizes() throws {
        #expect(throws: CryptoError.self) {
            try ChaChaPoly.seal(Self.plaintext, using: SymmetricKey(size: .bits128), authenticating: Self.aad)
        }
        #expect(throws: CryptoError.self) { try ChaChaPoly.SealedBox(combined: [UInt8](repeating: 0, count: 27)) }
        #expect(throws: CryptoError.self) { try ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 11)) }
        let empty = try ChaChaPoly.seal([UInt8](), using: Self.key, authenticating: [UInt8]())
        #expect(empty.combined.count == 28)
        #expect(try ChaChaPoly.open(empty, using: Self.key, authenticating: [UInt8]()).isEmpty)
    }

    @Test("each seal draws a new nonce, and a large message round-trips")
    func randomNonces() throws {
        let message = [UInt8](repeating: 0x5A, count: 3 << 20)
        let first = try ChaChaPoly.seal(message, using: Self.key, authenticating: Self.aad)
        let second = try ChaChaPoly.seal(message, using: Self.key, authenticating: Self.aad)
        #expect(first.combined.prefix(12) != second.combined.prefix(12))
        #expect(Array(try ChaChaPoly.open(first, using: Self.key, authenticating: Self.aad)) == message)
        #expect(
            Array(
                try ChaChaPoly.open(
                    try ChaChaPoly.SealedBox(combined: Data(second.combined)), using: Self.key, authenticating: Data(Self.aad))) == message)
    }

    // MARK: - RFC 7914 §12

    @Test(
        "scrypt of RFC 7914 §12's first three vectors",
        arguments: [
            (
                "", "", 16, 1, 1,
                "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"
            ),
            (
                "password", "NaCl", 1024, 8, 16,
                "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
            ),
            (
                "pleaseletmein", "SodiumChloride", 16384, 8, 1,
                "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"
            ),
        ])
    func rfc7914(password: String, salt: String, n: Int, r: Int, p: Int, expected: String) throws {
        let key = try KDF.Scrypt.deriveKey(
            from: Vectors.ascii(password), salt: Vectors.ascii(salt), outputByteCount: 64, rounds: n, blockSize: r, parallelism: p)
        #expect(key.withUnsafeBytes { Vectors.hex($0) } == expected)
    }

    @Test("scrypt refuses N not a power of two, zero r or p, and more memory than maxMemory allows")
    func scryptRefusals() {
        let password = Vectors.ascii("password")
        let salt = Vectors.ascii("NaCl")
        for (n, r, p) in [(1000, 8, 1), (1, 8, 1), (1024, 0, 1), (1024, 8, 0)] {
            #expect(throws: CryptoError.self) {
                try KDF.Scrypt.deriveKey(from: password, salt: salt, outputByteCount: 32, rounds: n, blockSize: r, parallelism: p)
            }
        }
        // N = 2^14, r = 8 needs 16 MiB: refused under 8 MiB.
        #expect(throws: CryptoError.self) {
            try KDF.Scrypt.deriveKey(
                from: password, salt: salt, outputByteCount: 32, rounds: 1 << 14, blockSize: 8, parallelism: 1, maxMemory: 8 << 20)
        }
    }
}
