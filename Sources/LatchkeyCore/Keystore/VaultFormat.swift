import Crypto
import CryptoExtras
import Foundation

/// The vault file's bytes: a versioned header, authenticated as associated data, then one
/// ChaCha20-Poly1305 box holding the JSON records.
///
/// ```
/// "LATCHKEY"  magic, 8 bytes
/// u16         format version (1)
/// u8          KDF (1 = scrypt)    u8 log2(N)   u32 r   u32 p   u8 salt length   salt
/// u8          AEAD (1 = ChaCha20-Poly1305)
/// 16 bytes    key check: HMAC-SHA256(key, "latchkey vault key check"), truncated
/// ...         sealed box: 12-byte nonce, ciphertext, 16-byte tag
/// ```
/// The key check tells a wrong passphrase apart from a damaged file; it gives an attacker
/// nothing the AEAD tag does not already give (a way to test a guess).
struct VaultFormat {
    static let magic = Array("LATCHKEY".utf8)
    static let currentVersion: UInt16 = 1
    static let scryptID: UInt8 = 1
    static let chaChaPolyID: UInt8 = 1

    /// scrypt cost parameters (RFC 7914).
    struct KDFParameters: Equatable, Sendable {
        var log2N: UInt8
        var r: UInt32
        var p: UInt32

        /// N = 2^17, r = 8, p = 1: 128 MiB and about 0.3 s in a release build on the 2-core development
        /// machine (2^16 measured 0.16 s, under the 0.25–1 s budget; see benchmarks/vault.sh).
        static let standard = KDFParameters(log2N: 17, r: 8, p: 1)
        var memoryBytes: Int { 128 * Int(r) * (1 << Int(log2N)) + 1 << 20 }

        /// Whether deriving a key with these parameters costs at most twice what Latchkey writes,
        /// in memory (128·r·N) and in work (N·r·p). The header is read before anything
        /// authenticates it, so a tampered one must not buy gigabytes or minutes of scrypt.
        var isAffordable: Bool {
            let standard = Self.standard
            let work = (1 << Int(log2N)) * Int(r) * Int(p)
            let standardWork = (1 << Int(standard.log2N)) * Int(standard.r) * Int(standard.p)
            return memoryBytes <= 2 * standard.memoryBytes && work <= 2 * standardWork
        }
    }

    struct Header: Equatable, Sendable {
        var version: UInt16
        var kdf: KDFParameters
        var salt: [UInt8]
        var keyCheck: [UInt8]

        func encoded() -> [UInt8] {
            var bytes = VaultFormat.magic
            bytes += [UInt8(version >> 8), UInt8(version & 0xFF), VaultFormat.scryptID, kdf.log2N]
            bytes += bigEndian(kdf.r) + bigEndian(kdf.p)
            bytes += [UInt8(salt.count)] + salt + [VaultFormat.chaChaPolyID] + keyCheck
            return bytes
        }
    }

    enum ParseError: Error, Equatable {
        case notAVault
        case truncated
        case newerVersion(Int)
        case unsupported(String)
    }

    /// Splits a file into header and sealed box, checking everything that can be checked without a key.
    static func parse(_ bytes: [UInt8]) throws(ParseError) -> (header: Header, headerBytes: [UInt8], sealed: [UInt8]) {
        guard bytes.count >= magic.count else { throw bytes.isEmpty || magic.starts(with: bytes) ? .truncated : .notAVault }
        guard Array(bytes[0..<magic.count]) == magic else { throw .notAVault }
        var reader = ByteReader(bytes: bytes, offset: magic.count)
        guard let version = reader.u16() else { throw .truncated }
        guard version <= currentVersion else { throw .newerVersion(Int(version)) }
        guard version == currentVersion else { throw .unsupported("format version \(version)") }
        guard let kdfID = reader.u8(), let log2N = reader.u8(), let r = reader.u32(), let p = reader.u32(), let saltCount = reader.u8(),
            let salt = reader.take(Int(saltCount)), let aeadID = reader.u8(), let keyCheck = reader.take(16)
        else { throw .truncated }
        guard kdfID == scryptID else { throw .unsupported("key derivation \(kdfID)") }
        guard aeadID == chaChaPolyID else { throw .unsupported("cipher \(aeadID)") }
        guard (10...22).contains(log2N), (1...32).contains(r), (1...16).contains(p), salt.count >= 16,
            KDFParameters(log2N: log2N, r: r, p: p).isAffordable
        else {
            throw .unsupported("key derivation parameters beyond twice the cost Latchkey writes (damaged or tampered header)")
        }
        // Nonce (12) + tag (16) at least.
        guard bytes.count - reader.offset >= 28 else { throw .truncated }
        let header = Header(version: version, kdf: KDFParameters(log2N: log2N, r: r, p: p), salt: salt, keyCheck: keyCheck)
        return (header, Array(bytes[0..<reader.offset]), Array(bytes[reader.offset...]))
    }

    static func deriveKey(passphrase: Secret, salt: [UInt8], parameters: KDFParameters) throws -> SymmetricKey {
        var bytes = Array(passphrase.exposedValue.utf8)
        defer { bytes.zeroize() }
        return try KDF.Scrypt.deriveKey(
            from: bytes, salt: salt, outputByteCount: 32, rounds: 1 << Int(parameters.log2N),
            blockSize: Int(parameters.r), parallelism: Int(parameters.p), maxMemory: parameters.memoryBytes)
    }

    static func keyCheck(for key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array("latchkey vault key check".utf8), using: key).prefix(16))
    }

    static func seal(_ plaintext: [UInt8], header: Header, key: SymmetricKey) throws -> [UInt8] {
        let headerBytes = header.encoded()
        let box = try ChaChaPoly.seal(plaintext, using: key, authenticating: headerBytes)
        return headerBytes + Array(box.combined)
    }

    static func open(sealed: [UInt8], headerBytes: [UInt8], key: SymmetricKey) throws -> [UInt8] {
        let box = try ChaChaPoly.SealedBox(combined: sealed)
        return Array(try ChaChaPoly.open(box, using: key, authenticating: headerBytes))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Reads big-endian integers from a byte array, returning `nil` past the end.
struct ByteReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func u8() -> UInt8? { take(1)?[0] }
    mutating func u16() -> UInt16? { take(2).map { UInt16($0[0]) << 8 | UInt16($0[1]) } }
    mutating func u32() -> UInt32? { take(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } }
}
