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
package struct VaultFormat {
    package static let magic = Array("LATCHKEY".utf8)
    package static let currentVersion: UInt16 = 1
    package static let scryptID: UInt8 = 1
    package static let chaChaPolyID: UInt8 = 1
    /// The passphrase vault's name in `status` and `doctor`.
    package static let keystoreName = "vault"

    /// scrypt cost parameters (RFC 7914).
    package struct KDFParameters: Equatable, Sendable {
        package var log2N: UInt8
        package var r: UInt32
        package var p: UInt32

        package init(log2N: UInt8, r: UInt32, p: UInt32) {
            self.log2N = log2N
            self.r = r
            self.p = p
        }

        /// N = 2^17, r = 8, p = 1: 128 MiB and about 0.3 s in a release build on the 2-core development
        /// machine (2^16 measured 0.16 s, under the 0.25–1 s budget; see benchmarks/vault.sh).
        package static let standard = KDFParameters(log2N: 17, r: 8, p: 1)
        package var memoryBytes: Int { 128 * Int(r) * (1 << Int(log2N)) + 1 << 20 }

        /// Whether deriving a key with these parameters costs at most twice what Latchkey writes,
        /// in memory (128·r·N) and in work (N·r·p). The header is read before anything
        /// authenticates it, so a tampered one must not buy gigabytes or minutes of scrypt.
        package var isAffordable: Bool {
            let standard = Self.standard
            let work = (1 << Int(log2N)) * Int(r) * Int(p)
            let standardWork = (1 << Int(standard.log2N)) * Int(standard.r) * Int(standard.p)
            return memoryBytes <= 2 * standard.memoryBytes && work <= 2 * standardWork
        }
    }

    package struct Header: Equatable, Sendable {
        package var version: UInt16
        package var kdf: KDFParameters
        package var salt: [UInt8]
        package var keyCheck: [UInt8]

        package init(version: UInt16, kdf: KDFParameters, salt: [UInt8], keyCheck: [UInt8]) {
            self.version = version
            self.kdf = kdf
            self.salt = salt
            self.keyCheck = keyCheck
        }

        package func encoded() -> [UInt8] {
            var bytes = VaultFormat.magic
            bytes += [UInt8(version >> 8), UInt8(version & 0xFF), VaultFormat.scryptID, kdf.log2N]
            bytes += bigEndian(kdf.r) + bigEndian(kdf.p)
            bytes += [UInt8(salt.count)] + salt + [VaultFormat.chaChaPolyID] + keyCheck
            return bytes
        }
    }

    package enum ParseError: Error, Equatable {
        case notAVault
        case truncated
        case newerVersion(Int)
        case unsupported(String)
    }

    /// Splits a file into header and sealed box, checking everything that can be checked without a key.
    package static func parse(_ bytes: [UInt8]) throws(ParseError) -> (header: Header, headerBytes: [UInt8], sealed: [UInt8]) {
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

    package static func keyCheck(for key: VaultKey) -> [UInt8] {
        Array(key.withUnsafeBytes { VaultCrypto.hmacSHA256(key: $0, message: Array("latchkey vault key check".utf8)) }.prefix(16))
    }

    /// The file: the header, then the box sealed under a random nonce with the header as
    /// associated data (nonce ‖ ciphertext ‖ tag, the layout every vault has had).
    package static func seal(_ plaintext: [UInt8], header: Header, key: VaultKey) -> [UInt8] {
        let headerBytes = header.encoded()
        // getrandom(2), through the standard library's cryptographically secure generator.
        var random = SystemRandomNumberGenerator()
        let nonce = (0..<VaultCrypto.ChaCha20Poly1305.nonceByteCount).map { _ in UInt8.random(in: 0...255, using: &random) }
        return headerBytes + nonce + VaultCrypto.ChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, authenticating: headerBytes)
    }

    /// The plaintext of `sealed` (nonce ‖ ciphertext ‖ tag) if it authenticates with `headerBytes`.
    package static func open(
        sealed: [UInt8], headerBytes: [UInt8], key: VaultKey
    ) throws(VaultCrypto.ChaCha20Poly1305.AuthenticationFailure) -> [UInt8] {
        let nonceCount = VaultCrypto.ChaCha20Poly1305.nonceByteCount
        guard sealed.count >= nonceCount + VaultCrypto.ChaCha20Poly1305.tagByteCount else { throw .init() }
        return try VaultCrypto.ChaCha20Poly1305.open(
            Array(sealed[nonceCount...]), key: key, nonce: Array(sealed[0..<nonceCount]), authenticating: headerBytes)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Reads big-endian integers from a byte array, returning `nil` past the end.
package struct ByteReader {
    package let bytes: [UInt8]
    package var offset: Int

    package init(bytes: [UInt8], offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    package mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    package mutating func u8() -> UInt8? { take(1)?[0] }
    package mutating func u16() -> UInt16? { take(2).map { UInt16($0[0]) << 8 | UInt16($0[1]) } }
    package mutating func u32() -> UInt32? { take(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } }
}
