public import Foundation
import LatchkeyCrypto
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// One account's DPoP key pair (RFC 9449): P-256, made for a sign-in, kept in the vault with the
/// account's tokens and never printed. Tokens bound to it are useless without it, so a refresh
/// of a bound account that has lost its key is refused rather than sent unbound.
public struct DPoPKey: Sendable {
    /// The only algorithm Latchkey signs proofs with (RFC 9449 §5.1 lists what servers take).
    public static let algorithm = "ES256"

    let privateKey: P256.Signing.PrivateKey

    /// A new key pair from the system's random source.
    public init() {
        privateKey = P256.Signing.PrivateKey()
    }

    /// The key the vault kept (`stored`).
    public init(stored: Secret) throws(DPoPError) {
        guard let raw = Base64URL.decode(stored.exposedValue), let key = try? P256.Signing.PrivateKey(rawRepresentation: raw) else {
            throw .unreadableKey
        }
        privateKey = key
    }

    /// The private scalar, base64url: what the vault keeps (`AccountRecord.dpopKey`).
    public var stored: Secret { Secret(Base64URL.encode(privateKey.rawRepresentation)) }

    /// The public key as a JWK (RFC 7517, RFC 7518 §6.2.1): the `jwk` header of every proof.
    var publicJWK: PublicJWK {
        let raw = privateKey.publicKey.rawRepresentation
        return PublicJWK(x: Base64URL.encode(raw.prefix(32)), y: Base64URL.encode(raw.suffix(32)))
    }

    /// The JWK SHA-256 thumbprint (RFC 7638 §3): `dpop_jkt` (RFC 9449 §10) and the token's `cnf.jkt`.
    public var thumbprint: String { publicJWK.thumbprint }

    /// A DPoP proof for one request (RFC 9449 §4.2): `htm`, `htu` without query or fragment,
    /// `iat`, a fresh `jti`, the server's `nonce` when it asked for one, and `ath` when the
    /// request carries `accessToken` (§4.3, for a resource server).
    public func proof(
        method: String, url: URL, at time: Date, nonce: String? = nil, accessToken: Secret? = nil
    ) -> String {
        let claims = Claims(
            jti: SecureRandom.token(byteCount: 16), htm: method, htu: Self.targetURI(url), iat: Int(time.timeIntervalSince1970),
            nonce: nonce,
            ath: accessToken.map { Self.accessTokenHash($0) })
        // Signing with a valid P-256 key and encoding two fixed structs cannot fail.
        return try! JWSSigner.es256(privateKey).compact(header: Header(jwk: publicJWK), claims: claims)
    }

    /// `ath` (RFC 9449 §4.2): base64url SHA-256 of the access token's ASCII.
    public static func accessTokenHash(_ token: Secret) -> String {
        Base64URL.encode(SHA256.hash(data: Array(token.exposedValue.utf8)))
    }

    /// `htu`: the request URI without its query and fragment (RFC 9449 §4.2).
    package static func targetURI(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.query = nil
        components.fragment = nil
        return components.string ?? url.absoluteString
    }

    /// An EC P-256 public key's JWK members.
    struct PublicJWK: Encodable, Equatable {
        var kty = "EC"
        var crv = "P-256"
        var x: String
        var y: String

        /// RFC 7638 §3.2: the required members only, in lexicographic order, no whitespace.
        var thumbprint: String {
            let canonical = #"{"crv":"\#(crv)","kty":"\#(kty)","x":"\#(x)","y":"\#(y)"}"#
            return Base64URL.encode(SHA256.hash(data: Array(canonical.utf8)))
        }
    }

    /// The proof's JOSE header (RFC 9449 §4.2).
    struct Header: Encodable {
        var typ = "dpop+jwt"
        var alg = DPoPKey.algorithm
        var jwk: PublicJWK
    }

    /// The proof's claims (RFC 9449 §4.2); `nonce` and `ath` only when they apply.
    struct Claims: Encodable {
        var jti: String
        var htm: String
        var htu: String
        var iat: Int
        var nonce: String?
        var ath: String?
    }
}

/// Why a DPoP-bound account cannot be used.
public enum DPoPError: LatchkeyError, Equatable {
    /// The vault's key does not decode: the account must sign in again.
    case unreadableKey
    /// The account's tokens are DPoP-bound but the record lost its key (a vault rewritten by a
    /// Latchkey that did not know the key).
    case missingKey(account: String, provider: String)
    /// `latchkey proof` for an account whose tokens are plain bearer tokens.
    case notBound(account: String, provider: String)
    /// A proof was asked for a token that is not the account's current access token (`ath`):
    /// the agent signs only for the token it holds now.
    case notCurrentToken(account: String, provider: String)

    public var category: FailureCategory {
        switch self {
        case .unreadableKey, .missingKey, .notCurrentToken: return .rejected
        case .notBound: return .notFound
        }
    }

    public var description: String {
        switch self {
        case .unreadableKey:
            return "the account's DPoP key in the vault cannot be read; sign in again to make a new one"
        case .missingKey(let account, let provider):
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) has DPoP-bound tokens but no DPoP key in the vault, so a refresh would be refused; run `latchkey login \(provider)` to sign in again"
        case .notBound(let account, let provider):
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) has bearer tokens, not DPoP-bound ones: send them without a proof"
        case .notCurrentToken(let account, let provider):
            return
                "the proof was asked for a token that is not \(TerminalText.sanitized(account, maxLength: 100)) at \(provider)'s current access token; nothing was signed: ask for the token again, then for its proof"
        }
    }
}
