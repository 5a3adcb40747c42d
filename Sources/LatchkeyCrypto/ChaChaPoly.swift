internal import CLatchkeyCrypto
public import FoundationEssentials

/// ChaCha20-Poly1305 (RFC 8439 §2.8), OpenSSL's.
///
/// The vault seals with its own Swift implementation (`VaultCrypto` in LatchkeyVault, so that the
/// launcher links no OpenSSL); this one is the reference the tests hold that implementation to.
/// A box's combined form is the 12-byte nonce, the ciphertext and the 16-byte tag, in that order:
/// the layout swift-crypto (CryptoKit's API) wrote, and the vault file's.
public enum ChaChaPoly {
    static let keyByteCount = 32
    static let nonceByteCount = 12
    static let tagByteCount = 16

    /// A 96-bit nonce (RFC 8439 §2.8). A key must never seal two messages under one nonce; a
    /// random one per box, as `seal` makes, keeps that for far more boxes than a vault sees.
    public struct Nonce: Sendable, ContiguousBytes {
        let bytes: [UInt8]

        /// A random nonce.
        public init() { bytes = CryptoLibrary.randomBytes(ChaChaPoly.nonceByteCount) }

        /// The nonce `data`, exactly 12 bytes.
        public init<D: DataProtocol>(data: D) throws(CryptoError) {
            guard data.count == ChaChaPoly.nonceByteCount else {
                throw .invalidParameter("a ChaCha20-Poly1305 nonce is 12 bytes, not \(data.count)")
            }
            bytes = [UInt8](data)
        }

        public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try bytes.withUnsafeBytes(body) }
    }

    /// A sealed message: nonce ‖ ciphertext ‖ tag.
    public struct SealedBox: Sendable {
        /// nonce ‖ ciphertext ‖ tag.
        public let combined: Data

        /// A box from its combined form; at least a nonce and a tag long.
        public init<D: DataProtocol>(combined: D) throws(CryptoError) {
            guard combined.count >= ChaChaPoly.nonceByteCount + ChaChaPoly.tagByteCount else {
                throw .invalidParameter("a ChaCha20-Poly1305 box of \(combined.count) bytes is shorter than its nonce and tag (28)")
            }
            self.combined = Data(combined)
        }

        public init<C: DataProtocol, T: DataProtocol>(nonce: Nonce, ciphertext: C, tag: T) throws(CryptoError) {
            guard tag.count == ChaChaPoly.tagByteCount else {
                throw .invalidParameter("a Poly1305 tag is 16 bytes, not \(tag.count)")
            }
            combined = Data(nonce.bytes) + Data(ciphertext) + Data(tag)
        }

        public var nonce: Nonce { Nonce(unchecked: combined.prefix(ChaChaPoly.nonceByteCount)) }
        public var ciphertext: Data {
            Data(combined.dropFirst(ChaChaPoly.nonceByteCount).dropLast(ChaChaPoly.tagByteCount))
        }
        public var tag: Data { Data(combined.suffix(ChaChaPoly.tagByteCount)) }
    }

    /// Seals `message`, authenticating `authenticatedData` with it (RFC 8439 §2.8), under a random
    /// nonce unless one is given.
    public static func seal<M: DataProtocol, A: DataProtocol>(
        _ message: M, using key: SymmetricKey, nonce: Nonce = Nonce(), authenticating authenticatedData: A
    ) throws(CryptoError) -> SealedBox {
        try checkKey(key)
        let nonceCount = nonceByteCount
        var combined = Data(count: nonceCount + message.count + tagByteCount)
        let status = combined.withUnsafeMutableBytes { output in
            nonce.bytes.withUnsafeBytes { output.copyMemory(from: $0) }
            return key.withUnsafeBytes { keyBytes in
                withContiguousBytes(authenticatedData) { aad in
                    withContiguousBytes(message) { plaintext in
                        lk_crypto_chacha20_poly1305_seal(
                            keyBytes.bytes, output.bytes, aad.bytes, aad.count, plaintext.bytes, plaintext.count,
                            output.bytes.map { $0 + nonceCount }, output.bytes.map { $0 + nonceCount + plaintext.count })
                    }
                }
            }
        }
        try CryptoError.check(status, "seal a ChaCha20-Poly1305 box", invalid: .invalidParameter("ChaCha20-Poly1305 refused its input"))
        return try SealedBox(combined: combined)
    }

    /// The message in `box`, if its tag verifies with `key` and `authenticatedData`; otherwise
    /// `CryptoError.authenticationFailure` and nothing of the plaintext.
    public static func open<A: DataProtocol>(
        _ box: SealedBox, using key: SymmetricKey, authenticating authenticatedData: A
    ) throws(CryptoError) -> Data {
        try checkKey(key)
        let ciphertextCount = box.combined.count - nonceByteCount - tagByteCount
        var plaintext = Data(count: ciphertextCount)
        let status = plaintext.withUnsafeMutableBytes { output in
            box.combined.withUnsafeBytes { sealed in
                key.withUnsafeBytes { keyBytes in
                    withContiguousBytes(authenticatedData) { aad in
                        let nonce = sealed.bytes
                        let ciphertext = nonce.map { $0 + nonceByteCount }
                        let tag = ciphertext.map { $0 + ciphertextCount }
                        return lk_crypto_chacha20_poly1305_open(
                            keyBytes.bytes, nonce, aad.bytes, aad.count, ciphertext, ciphertextCount, tag, output.bytes)
                    }
                }
            }
        }
        try CryptoError.check(status, "open a ChaCha20-Poly1305 box", invalid: .invalidParameter("ChaCha20-Poly1305 refused its input"))
        return plaintext
    }

    private static func checkKey(_ key: SymmetricKey) throws(CryptoError) {
        guard key.bitCount == keyByteCount * 8 else {
            throw .invalidKey("a ChaCha20-Poly1305 key is 256 bits, not \(key.bitCount)")
        }
    }
}

extension ChaChaPoly.Nonce {
    init<D: DataProtocol>(unchecked data: D) { bytes = [UInt8](data) }
}
