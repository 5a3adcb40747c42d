internal import CLatchkeyCrypto
public import FoundationEssentials

/// The NIST curves Latchkey signs or verifies on (FIPS 186-4 §D.1.2).
public enum EllipticCurve: Sendable {
    case p256, p384

    var library: lk_crypto_curve {
        switch self {
        case .p256: return LK_CRYPTO_P256
        case .p384: return LK_CRYPTO_P384
        }
    }

    /// The size of a coordinate, of the private scalar, and of r and s, in bytes.
    public var byteCount: Int {
        switch self {
        case .p256: return 32
        case .p384: return 48
        }
    }
}

/// A curve with the hash its JOSE algorithm pairs it with (RFC 7518 §3.4: ES256 is P-256 with
/// SHA-256, ES384 is P-384 with SHA-384).
public protocol ECDSACurve: Sendable {
    associatedtype Hash: HashFunction
    static var curve: EllipticCurve { get }
}

/// P-256 with SHA-256: DPoP proofs (RFC 9449), ES256 client assertions and ID tokens.
public enum P256: ECDSACurve {
    public typealias Hash = SHA256
    public static let curve = EllipticCurve.p256

    public enum Signing {
        public typealias PrivateKey = ECDSAPrivateKey<P256>
        public typealias PublicKey = ECDSAPublicKey<P256>
        public typealias ECDSASignature = ECDSASignatureValue<P256>
    }
}

/// P-384 with SHA-384: ES384 ID tokens.
public enum P384: ECDSACurve {
    public typealias Hash = SHA384
    public static let curve = EllipticCurve.p384

    public enum Signing {
        public typealias PrivateKey = ECDSAPrivateKey<P384>
        public typealias PublicKey = ECDSAPublicKey<P384>
        public typealias ECDSASignature = ECDSASignatureValue<P384>
    }
}

/// An ECDSA private key on `Curve` (with its public point).
public struct ECDSAPrivateKey<Curve: ECDSACurve>: Sendable {
    let key: KeyHandle

    /// A new key from OpenSSL's random source.
    public init() {
        var pointer: OpaquePointer?
        let status = lk_crypto_ec_generate(Curve.curve.library, &pointer)
        do {
            key = try KeyHandle.adopt(pointer, status, "generate an EC key", invalid: .invalidKey("no such curve"))
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// The key whose private scalar is `rawRepresentation`: big-endian, exactly the curve's size
    /// (32 bytes for P-256), 0 < d < n. This is how DPoP keys are kept in the vault.
    public init<D: ContiguousBytes>(rawRepresentation: D) throws(CryptoError) {
        var pointer: OpaquePointer?
        let (status, count) = rawRepresentation.withUnsafeBytes { scalar in
            (lk_crypto_ec_private_key(Curve.curve.library, scalar.bytes, scalar.count, &pointer), scalar.count)
        }
        key = try KeyHandle.adopt(
            pointer, status, "read an EC private key",
            invalid: .invalidKey("not a \(Curve.curve) private scalar (\(Curve.curve.byteCount) bytes, 0 < d < n); \(count) bytes given"))
    }

    init(key: KeyHandle) { self.key = key }

    /// The private scalar, big-endian, the curve's size.
    public var rawRepresentation: Data {
        var scalar = Data(count: Curve.curve.byteCount)
        let status = scalar.withUnsafeMutableBytes { lk_crypto_ec_scalar(key.pointer, $0.bytes, $0.count) }
        guard status == LK_CRYPTO_OK else { preconditionFailure("OpenSSL failed to export an EC private scalar") }
        return scalar
    }

    /// The key as unencrypted PKCS #8 PEM.
    public var pemRepresentation: String { key.privatePEM }

    public var publicKey: ECDSAPublicKey<Curve> { ECDSAPublicKey(key: key) }

    /// The ECDSA signature of `data`'s `Curve.Hash` digest.
    public func signature<D: DataProtocol>(for data: D) throws(CryptoError) -> ECDSASignatureValue<Curve> {
        try signature(for: Curve.Hash.hash(data: data))
    }

    /// The ECDSA signature of `digest` (a random nonce per signature, as OpenSSL makes it).
    public func signature(for digest: Digest<Curve.Hash>) throws(CryptoError) -> ECDSASignatureValue<Curve> {
        var rs = [UInt8](repeating: 0, count: 2 * Curve.curve.byteCount)
        let status = digest.bytes.withUnsafeBytes { input in
            rs.withUnsafeMutableBytes { lk_crypto_ecdsa_sign(key.pointer, input.bytes, input.count, $0.bytes, $0.count) }
        }
        try CryptoError.check(status, "sign with ECDSA", invalid: .invalidKey("OpenSSL refused to sign with this \(Curve.curve) key"))
        return ECDSASignatureValue(rs: rs)
    }
}

extension ECDSAPrivateKey where Curve == P256 {
    /// A P-256 private key from PEM: PKCS #8 ("BEGIN PRIVATE KEY") or SEC 1 ("BEGIN EC PRIVATE
    /// KEY"), unencrypted. Anything else, another curve or an RSA key included, is refused.
    public init(pemRepresentation: String) throws(CryptoError) {
        key = try KeyHandle.privateKey(
            fromPEM: pemRepresentation, LK_CRYPTO_KEY_P256, refusal: "no unencrypted P-256 private key in this PEM")
    }
}

/// An ECDSA public key on `Curve`.
public struct ECDSAPublicKey<Curve: ECDSACurve>: Sendable {
    let key: KeyHandle

    init(key: KeyHandle) { self.key = key }

    /// The key at the point x ‖ y (each the curve's size: a JWK's `x` and `y`, RFC 7518 §6.2.1);
    /// a point that is not on the curve is refused.
    public init<D: ContiguousBytes>(rawRepresentation: D) throws(CryptoError) {
        var pointer: OpaquePointer?
        let (status, count) = rawRepresentation.withUnsafeBytes { point in
            (lk_crypto_ec_public_key(Curve.curve.library, point.bytes, point.count, &pointer), point.count)
        }
        key = try KeyHandle.adopt(
            pointer, status, "read an EC public key",
            invalid: .invalidKey("not a point on \(Curve.curve) (x ‖ y, \(2 * Curve.curve.byteCount) bytes); \(count) bytes given"))
    }

    /// x ‖ y, each the curve's size.
    public var rawRepresentation: Data {
        var point = Data(count: 2 * Curve.curve.byteCount)
        let status = point.withUnsafeMutableBytes { lk_crypto_ec_point(key.pointer, $0.bytes, $0.count) }
        guard status == LK_CRYPTO_OK else { preconditionFailure("OpenSSL failed to export an EC public point") }
        return point
    }

    /// Whether `signature` is this key's signature of `data`'s `Curve.Hash` digest.
    public func isValidSignature<D: DataProtocol>(_ signature: ECDSASignatureValue<Curve>, for data: D) -> Bool {
        isValidSignature(signature, for: Curve.Hash.hash(data: data))
    }

    /// Whether `signature` is this key's signature of `digest`.
    public func isValidSignature(_ signature: ECDSASignatureValue<Curve>, for digest: Digest<Curve.Hash>) -> Bool {
        digest.bytes.withUnsafeBytes { input in
            signature.rs.withUnsafeBytes { lk_crypto_ecdsa_verify(key.pointer, input.bytes, input.count, $0.bytes, $0.count) }
        } == LK_CRYPTO_OK
    }
}

/// An ECDSA signature on `Curve`: r and s.
public struct ECDSASignatureValue<Curve: ECDSACurve>: Sendable {
    /// r ‖ s, each the curve's size.
    let rs: [UInt8]

    init(rs: [UInt8]) { self.rs = rs }

    /// r ‖ s, each exactly the curve's size: the JWS form (RFC 7518 §3.4).
    public init<D: DataProtocol>(rawRepresentation: D) throws(CryptoError) {
        guard rawRepresentation.count == 2 * Curve.curve.byteCount else {
            throw .invalidParameter(
                "an ECDSA signature on \(Curve.curve) is r ‖ s, \(2 * Curve.curve.byteCount) bytes, not \(rawRepresentation.count)")
        }
        rs = [UInt8](rawRepresentation)
    }

    /// A DER ECDSA-Sig-Value (RFC 3279 §2.2.3), as X.509 and TLS carry it.
    public init<D: DataProtocol>(derRepresentation: D) throws(CryptoError) {
        var rs = [UInt8](repeating: 0, count: 2 * Curve.curve.byteCount)
        let status = withContiguousBytes(derRepresentation) { der in
            rs.withUnsafeMutableBytes { lk_crypto_ecdsa_raw_from_der(der.bytes, der.count, $0.bytes, $0.count) }
        }
        try CryptoError.check(
            status, "read a DER ECDSA signature", invalid: .invalidParameter("not a DER ECDSA signature on \(Curve.curve)"))
        self.rs = rs
    }

    /// r ‖ s (RFC 7518 §3.4).
    public var rawRepresentation: Data { Data(rs) }

    /// The DER ECDSA-Sig-Value (RFC 3279 §2.2.3).
    public var derRepresentation: Data {
        var der: UnsafeMutablePointer<UInt8>?
        var count = 0
        guard rs.withUnsafeBytes({ lk_crypto_ecdsa_der_from_raw($0.bytes, $0.count, &der, &count) }) == LK_CRYPTO_OK else {
            preconditionFailure("OpenSSL failed to encode an ECDSA signature as DER")
        }
        return takeBuffer(der, count: count)
    }
}
