internal import CLatchkeyCrypto
public import FoundationEssentials

/// RSA signatures, RSASSA-PKCS1-v1_5 only (RFC 8017 §8.2): RS256, RS384 and RS512 in JOSE
/// (RFC 7518 §3.3), which ID tokens and `private_key_jwt` client assertions use.
///
/// (swift-crypto had these as `_RSA`, in CryptoExtras, underscored because it wished people used
/// something else; JOSE's RS256 is what identity providers sign with, so here it is plain `RSA`.)
public enum RSA {
    public enum Signing {
        /// The padding of a signature. Only PKCS #1 v1.5, which RFC 7518 §3.3 asks for; "insecure"
        /// as swift-crypto named it: PSS is preferred for new protocols, not available to JOSE's RS*.
        public struct Padding: Sendable, Equatable {
            let name: String
            // swift-format-ignore: AlwaysUseLowerCamelCase
            // swift-crypto's name, so the call sites read as they did.
            public static let insecurePKCS1v1_5 = Padding(name: "PKCS #1 v1.5")
        }

        /// A modulus size for a new key.
        public struct KeySize: Sendable, Equatable {
            public let bitCount: Int

            public init(bitCount: Int) { self.bitCount = bitCount }

            public static let bits2048 = KeySize(bitCount: 2048)
            public static let bits3072 = KeySize(bitCount: 3072)
            public static let bits4096 = KeySize(bitCount: 4096)
        }

        /// An RSA private key.
        public struct PrivateKey: Sendable {
            let key: KeyHandle

            /// A new key of `keySize` bits, public exponent 65537. (Slow: a 2048-bit key takes
            /// tens to hundreds of milliseconds.)
            public init(keySize: KeySize) throws(CryptoError) {
                guard keySize.bitCount >= 2048 else { throw .invalidKey("an RSA key of \(keySize.bitCount) bits; at least 2048 are made") }
                var pointer: OpaquePointer?
                let status = lk_crypto_rsa_generate(UInt32(keySize.bitCount), &pointer)
                key = try KeyHandle.adopt(
                    pointer, status, "generate an RSA key", invalid: .invalidKey("OpenSSL refused an RSA key of \(keySize.bitCount) bits"))
            }

            /// An RSA private key of at least 2048 bits from unencrypted PEM (PKCS #8 or PKCS #1).
            public init(pemRepresentation: String) throws(CryptoError) {
                try self.init(unsafePEMRepresentation: pemRepresentation)
                guard keySizeInBits >= 2048 else { throw .invalidKey("an RSA key of \(keySizeInBits) bits; at least 2048 are needed") }
            }

            /// An RSA private key of at least 1024 bits from unencrypted PEM (PKCS #8 ("BEGIN
            /// PRIVATE KEY") or PKCS #1 ("BEGIN RSA PRIVATE KEY")): the caller judges the size, as
            /// `ClientAssertion` does with its own message.
            public init(unsafePEMRepresentation: String) throws(CryptoError) {
                key = try KeyHandle.privateKey(
                    fromPEM: unsafePEMRepresentation, LK_CRYPTO_KEY_RSA, refusal: "no unencrypted RSA private key in this PEM")
                guard keySizeInBits >= 1024 else { throw .invalidKey("an RSA key of \(keySizeInBits) bits; at least 1024 are needed") }
            }

            public var keySizeInBits: Int { key.bits }

            public var publicKey: PublicKey { PublicKey(key: key) }

            /// The key as unencrypted PKCS #8 PEM ("BEGIN PRIVATE KEY").
            public var pemRepresentation: String { key.privatePEM }

            /// The RSASSA-PKCS1-v1_5 signature of `digest` (RFC 8017 §8.2.1).
            public func signature<H: HashFunction>(for digest: Digest<H>, padding: Padding) throws(CryptoError) -> RSASignature {
                var signature = [UInt8](repeating: 0, count: (keySizeInBits + 7) / 8)
                var count = 0
                let status = digest.bytes.withUnsafeBytes { input in
                    signature.withUnsafeMutableBytes {
                        lk_crypto_rsa_sign(key.pointer, H.algorithm.library, input.bytes, input.count, $0.bytes, $0.count, &count)
                    }
                }
                try CryptoError.check(
                    status, "sign with RSA", invalid: .invalidKey("OpenSSL refused to sign \(H.algorithm) with this RSA key"))
                return RSASignature(bytes: Array(signature.prefix(count)))
            }
        }

        /// An RSA public key.
        public struct PublicKey: Sendable {
            let key: KeyHandle

            init(key: KeyHandle) { self.key = key }

            /// The key with modulus `n` and public exponent `e`, unsigned big-endian (a JWK's `n`
            /// and `e`, RFC 7518 §6.3.1). Refused: a modulus under 2048 bits, or a modulus or
            /// exponent no RSA key has (even, exponent below 3 or over 33 bits).
            public init<N: ContiguousBytes, E: ContiguousBytes>(n: N, e: E) throws(CryptoError) {
                var pointer: OpaquePointer?
                let status = n.withUnsafeBytes { modulus in
                    e.withUnsafeBytes { lk_crypto_rsa_public_key(modulus.bytes, modulus.count, $0.bytes, $0.count, &pointer) }
                }
                key = try KeyHandle.adopt(pointer, status, "read an RSA public key", invalid: .invalidKey("not an RSA public key (n, e)"))
                guard keySizeInBits >= 2048 else { throw .invalidKey("an RSA key of \(keySizeInBits) bits; at least 2048 are needed") }
            }

            public var keySizeInBits: Int { key.bits }

            /// The key as a DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7, RFC 8017 Appendix A.1.1).
            public var derRepresentation: Data { key.publicDER }

            /// The modulus and public exponent, unsigned big-endian without leading zeros: a JWK's
            /// `n` and `e` (RFC 7518 §6.3.1).
            public func getKeyPrimitives() throws(CryptoError) -> (modulus: Data, publicExponent: Data) {
                (try component("n"), try component("e"))
            }

            private func component(_ name: Character) throws(CryptoError) -> Data {
                var bytes: UnsafeMutablePointer<UInt8>?
                var count = 0
                let status = lk_crypto_rsa_component(key.pointer, CChar(name.asciiValue!), &bytes, &count)
                try CryptoError.check(status, "export an RSA key", invalid: .invalidKey("not an RSA key"))
                return takeBuffer(bytes, count: count)
            }

            /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 signature of `digest` (RFC 8017 §8.2.2).
            public func isValidSignature<H: HashFunction>(_ signature: RSASignature, for digest: Digest<H>, padding: Padding) -> Bool {
                digest.bytes.withUnsafeBytes { input in
                    signature.bytes.withUnsafeBytes {
                        lk_crypto_rsa_verify(key.pointer, H.algorithm.library, input.bytes, input.count, $0.bytes, $0.count)
                    }
                } == LK_CRYPTO_OK
            }
        }

        /// An RSA signature: as many bytes as the modulus (RFC 8017 §8.2.1), as JWS carries it.
        public struct RSASignature: Sendable {
            let bytes: [UInt8]

            init(bytes: [UInt8]) { self.bytes = bytes }

            /// Any bytes: one of the wrong length simply does not verify.
            public init<D: DataProtocol>(rawRepresentation: D) { bytes = [UInt8](rawRepresentation) }

            public var rawRepresentation: Data { Data(bytes) }
        }
    }
}
