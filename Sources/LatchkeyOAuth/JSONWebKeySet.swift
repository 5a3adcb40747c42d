import Foundation
import LatchkeyCrypto
import LatchkeySupport

/// A JWK Set (RFC 7517 §5), as served at a provider's `jwks_uri`.
public struct JSONWebKeySet: Sendable {
    public var keys: [JSONWebKey]

    /// Parses the document; keys of unknown types are skipped, a document without `keys` is an error.
    public init(json: [UInt8]) throws(IDTokenError) {
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(json)) else {
            throw .unreadableKeySet("not a JSON object with a \"keys\" array")
        }
        keys = wire.keys.compactMap(JSONWebKey.init(wire:))
    }

    /// The document as it arrives: `keys` must be an array of objects.
    struct Wire: Decodable {
        var keys: [JSONWebKey.Wire]
    }
}

/// One public key from a JWK Set (RFC 7517 §4, RFC 7518 §6).
public struct JSONWebKey: Sendable {
    /// `kty`: `RSA` or `EC`.
    public var keyType: String
    /// `kid`
    public var keyID: String?
    /// `use`: only `sig` (or absent) keys verify signatures.
    public var use: String?
    /// `alg`, when the key is pinned to one algorithm.
    public var algorithm: String?
    /// RSA `n` and `e`, or EC `crv`, `x`, `y`, base64url-decoded.
    var rsaModulus: Data?
    var rsaExponent: Data?
    var curve: String?
    var x: Data?
    var y: Data?

    /// The key, or `nil` when the member has no `kty` (an unusable key, skipped).
    init?(wire: Wire) {
        guard let keyType = wire.keyType else { return nil }
        self.keyType = keyType
        keyID = wire.keyID
        use = wire.use
        algorithm = wire.algorithm
        rsaModulus = wire.n.flatMap(Base64URL.decode)
        rsaExponent = wire.e.flatMap(Base64URL.decode)
        curve = wire.crv
        x = wire.x.flatMap(Base64URL.decode)
        y = wire.y.flatMap(Base64URL.decode)
    }

    /// One member of `keys` as it arrives (RFC 7517 §4, RFC 7518 §6.2.1, §6.3.1). Read forgivingly:
    /// a parameter of another type is dropped, so a key of a type Latchkey does not use never
    /// spoils the set.
    struct Wire: Decodable {
        var keyType: String?
        var keyID: String?
        var use: String?
        var algorithm: String?
        var n: String?
        var e: String?
        var crv: String?
        var x: String?
        var y: String?

        enum CodingKeys: String, CodingKey {
            case keyType = "kty"
            case keyID = "kid"
            case use
            case algorithm = "alg"
            case n, e, crv, x, y
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            keyType = container.lenient(forKey: .keyType)
            keyID = container.lenient(forKey: .keyID)
            use = container.lenient(forKey: .use)
            algorithm = container.lenient(forKey: .algorithm)
            n = container.lenient(forKey: .n)
            e = container.lenient(forKey: .e)
            crv = container.lenient(forKey: .crv)
            x = container.lenient(forKey: .x)
            y = container.lenient(forKey: .y)
        }
    }

    /// Whether this key may verify a signature made with `algorithm`.
    func canVerify(_ algorithm: JWSAlgorithm, keyID wanted: String?) -> Bool {
        guard use == nil || use == "sig" else { return false }
        guard self.algorithm == nil || self.algorithm == algorithm.rawValue else { return false }
        if let wanted, keyID != wanted { return false }
        return keyType == algorithm.keyType
    }

    /// Verifies `signature` over `input`; `false` for a wrong signature or an unusable key.
    func verify(_ signature: [UInt8], over input: [UInt8], algorithm: JWSAlgorithm) -> Bool {
        switch algorithm {
        case .rs256, .rs384, .rs512:
            guard let modulus = rsaModulus, let exponent = rsaExponent, modulus.count >= 256,
                let key = try? RSA.Signing.PublicKey(n: modulus, e: exponent)
            else { return false }
            let rsaSignature = RSA.Signing.RSASignature(rawRepresentation: signature)
            switch algorithm {
            case .rs256: return key.isValidSignature(rsaSignature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
            case .rs384: return key.isValidSignature(rsaSignature, for: SHA384.hash(data: input), padding: .insecurePKCS1v1_5)
            default: return key.isValidSignature(rsaSignature, for: SHA512.hash(data: input), padding: .insecurePKCS1v1_5)
            }
        case .es256:
            guard curve == "P-256", let x, let y, x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(rawRepresentation: x + y),
                let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(ecdsa, for: SHA256.hash(data: input))
        case .es384:
            guard curve == "P-384", let x, let y, x.count == 48, y.count == 48,
                let key = try? P384.Signing.PublicKey(rawRepresentation: x + y),
                let ecdsa = try? P384.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(ecdsa, for: SHA384.hash(data: input))
        }
    }
}

/// The JWS algorithms accepted for ID tokens: asymmetric only.
///
/// `none` is refused outright, and HMAC (`HS*`) too: a verifier that accepted it would let anyone
/// sign with the provider's *public* key used as the HMAC secret.
public enum JWSAlgorithm: String, Sendable, CaseIterable {
    case rs256 = "RS256", rs384 = "RS384", rs512 = "RS512", es256 = "ES256", es384 = "ES384"

    var keyType: String {
        switch self {
        case .rs256, .rs384, .rs512: return "RSA"
        case .es256, .es384: return "EC"
        }
    }

    /// The left half of the hash this algorithm signs with, over `bytes`, base64url-encoded: an
    /// `at_hash` (OIDC Core §3.1.3.6, §3.3.2.11).
    func leftHalfHash(of bytes: [UInt8]) -> String {
        let digest: [UInt8]
        switch self {
        case .rs256, .es256: digest = Array(SHA256.hash(data: bytes))
        case .rs384, .es384: digest = Array(SHA384.hash(data: bytes))
        case .rs512: digest = Array(SHA512.hash(data: bytes))
        }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }
}
