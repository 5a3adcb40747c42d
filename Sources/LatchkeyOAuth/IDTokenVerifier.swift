public import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// The claims Latchkey keeps from a verified ID token.
public struct IDTokenClaims: Sendable, Equatable {
    /// `iss` and `sub`: together, the account's identity (OIDC Core §5.7).
    public var issuer: String
    public var subject: String
    /// `email`, `name`, `preferred_username`: for display only, never for identity.
    public var email: String?
    public var name: String?
    public var preferredUsername: String?
    public var expiresAt: Date
    /// `firebase.sign_in_second_factor` (`phone`, `totp`): how a Firebase account proved its
    /// second factor; `nil` for other providers.
    public var firebaseSecondFactor: String?

    /// The name an account is shown by, for every kind alike: `email`, else `name`, else
    /// `preferred_username`.
    public var displayName: String? { email ?? name ?? preferredUsername }
}

/// Verifies an ID token (OIDC Core §3.1.3.7): signature, issuer, audience, times and nonce.
public struct IDTokenVerifier: Sendable {
    public var issuer: String
    public var clientID: String
    /// Clock skew tolerated on `exp` and `iat`.
    public var allowedSkew: TimeInterval = 120

    public init(issuer: String, clientID: String) {
        self.issuer = issuer
        self.clientID = clientID
    }

    /// Verifies `token` with `keys`; `nonce` is required when the request sent one, and an
    /// `at_hash` in the token must match `accessToken`, the access token issued with it.
    public func verify(
        _ token: Secret, keys: JSONWebKeySet, nonce: Secret?, accessToken: Secret? = nil, now: Date
    ) throws(IDTokenError) -> IDTokenClaims {
        let parts = token.exposedValue.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw .malformed("not a compact JWS with three base64url parts") }
        guard let header = try? JSONDecoder().decode(Header.self, from: headerData) else {
            throw .malformed("the header is not a JSON object")
        }
        guard let algorithmName = header.algorithm else { throw .malformed("the header has no alg") }
        guard let algorithm = JWSAlgorithm(rawValue: algorithmName) else {
            throw .refusedAlgorithm(TerminalText.sanitized(algorithmName, maxLength: 20))
        }
        if header.hasCriticalExtensions { throw .malformed("the header has critical extensions Latchkey does not understand") }
        let keyID = header.keyID
        let candidates = keys.keys.filter { $0.canVerify(algorithm, keyID: keyID) }
        guard !candidates.isEmpty else { throw .unknownKey(keyID: keyID.map { TerminalText.sanitized($0, maxLength: 80) }) }
        let signingInput = Array((parts[0] + "." + parts[1]).utf8)
        guard candidates.contains(where: { $0.verify(Array(signature), over: signingInput, algorithm: algorithm) }) else {
            throw .badSignature
        }

        guard let claims = try? JSONDecoder().decode(Payload.self, from: claimsData) else {
            throw .malformed("the claims are not a JSON object")
        }
        guard let tokenIssuer = claims.issuer, tokenIssuer == issuer else {
            throw .claim("iss", "is \(TerminalText.sanitized(claims.issuer ?? "(missing)", maxLength: 200)), expected \(issuer)")
        }
        guard let subject = claims.subject, !subject.isEmpty else { throw .claim("sub", "is missing") }
        guard let audiences = claims.audiences else { throw .claim("aud", "is missing") }
        guard audiences.contains(clientID) else { throw .claim("aud", "does not contain this client's client_id") }
        let authorizedParty = claims.authorizedParty
        if audiences.count > 1 && authorizedParty == nil { throw .claim("azp", "is required when aud has several values") }
        if let authorizedParty, authorizedParty != clientID { throw .claim("azp", "is not this client's client_id") }
        guard let expiry = claims.expiry else { throw .claim("exp", "is missing") }
        guard now.timeIntervalSince1970 < expiry + allowedSkew else { throw .claim("exp", "is in the past: the ID token has expired") }
        guard let issuedAt = claims.issuedAt else { throw .claim("iat", "is missing") }
        guard issuedAt <= now.timeIntervalSince1970 + allowedSkew else {
            throw .claim("iat", "is in the future; check this machine's clock")
        }
        if let nonce {
            guard let tokenNonce = claims.nonce, nonce.constantTimeEquals(tokenNonce) else {
                throw .claim("nonce", "does not match the one sent with this sign-in (replayed ID token?)")
            }
        }
        if let accessTokenHash = claims.accessTokenHash, let accessToken {
            let expected = algorithm.leftHalfHash(of: Array(accessToken.exposedValue.utf8))
            guard Secret(expected).constantTimeEquals(accessTokenHash) else {
                throw .claim("at_hash", "does not match the access token issued with it")
            }
        }
        return IDTokenClaims(
            issuer: tokenIssuer, subject: subject, email: claims.email, name: claims.name,
            preferredUsername: claims.preferredUsername, expiresAt: Date(timeIntervalSince1970: expiry),
            firebaseSecondFactor: claims.firebase?.signInSecondFactor)
    }
}

// MARK: - Wire format

extension IDTokenVerifier {
    /// The JOSE header (RFC 7515 §4.1) members the verifier looks at.
    struct Header: Decodable {
        /// `alg`
        var algorithm: String?
        /// `kid`
        var keyID: String?
        /// Whether `crit` is present at all (with any value): no extension is understood.
        var hasCriticalExtensions: Bool

        enum CodingKeys: String, CodingKey {
            case algorithm = "alg"
            case keyID = "kid"
            case critical = "crit"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            algorithm = container.lenient(forKey: .algorithm)
            keyID = container.lenient(forKey: .keyID)
            hasCriticalExtensions = container.contains(.critical)
        }
    }

    /// The ID token's claims (OIDC Core §2, §5.1) as they arrive: the only place a payload is
    /// decoded. Read forgivingly: a claim of another type counts as absent, so a required one is
    /// then refused as missing and a display one is just not shown. `exp` and `iat` must be JSON
    /// numbers (RFC 7519 §2 NumericDate); a boolean is not one.
    package struct Payload: Decodable {
        var issuer: String?
        var subject: String?
        /// `aud`: one string or an array of strings.
        var audiences: [String]?
        var authorizedParty: String?
        package var expiry: Double?
        var issuedAt: Double?
        var nonce: String?
        /// `at_hash`
        var accessTokenHash: String?
        var email: String?
        var name: String?
        var preferredUsername: String?
        var firebase: Firebase?

        /// The `firebase` claim of Firebase Authentication ID tokens.
        struct Firebase: Decodable {
            /// `sign_in_second_factor`
            var signInSecondFactor: String?

            enum CodingKeys: String, CodingKey {
                case signInSecondFactor = "sign_in_second_factor"
            }

            init(from decoder: any Decoder) throws {
                signInSecondFactor = try decoder.container(keyedBy: CodingKeys.self).lenient(forKey: .signInSecondFactor)
            }
        }

        enum CodingKeys: String, CodingKey {
            case issuer = "iss"
            case subject = "sub"
            case audience = "aud"
            case authorizedParty = "azp"
            case expiry = "exp"
            case issuedAt = "iat"
            case nonce, email, name
            case accessTokenHash = "at_hash"
            case preferredUsername = "preferred_username"
            case firebase
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            issuer = container.lenient(forKey: .issuer)
            subject = container.lenient(forKey: .subject)
            audiences = container.lenient(String.self, forKey: .audience).map { [$0] } ?? container.lenient(forKey: .audience)
            authorizedParty = container.lenient(forKey: .authorizedParty)
            expiry = container.lenientNumber(forKey: .expiry)
            issuedAt = container.lenientNumber(forKey: .issuedAt)
            nonce = container.lenient(forKey: .nonce)
            accessTokenHash = container.lenient(forKey: .accessTokenHash)
            email = container.lenient(forKey: .email)
            name = container.lenient(forKey: .name)
            preferredUsername = container.lenient(forKey: .preferredUsername)
            firebase = container.lenient(forKey: .firebase)
        }
    }
}

/// Why an ID token was not accepted.
public enum IDTokenError: LatchkeyError, Equatable {
    case malformed(String)
    case refusedAlgorithm(String)
    case unknownKey(keyID: String?)
    case badSignature
    case claim(String, String)
    case unreadableKeySet(String)

    public var category: FailureCategory { .rejected }

    public var description: String {
        switch self {
        case .malformed(let reason): return "the ID token is malformed: \(reason)"
        case .refusedAlgorithm(let name):
            return "the ID token is signed with \(name); only RS256/384/512 and ES256/384 are accepted (never none or HMAC)"
        case .unknownKey(let keyID):
            return "no key in the provider's JWKS matches the ID token (kid \(keyID ?? "absent"))"
        case .badSignature: return "the ID token's signature does not verify with the provider's keys"
        case .claim(let name, let problem): return "the ID token's \(name) \(problem)"
        case .unreadableKeySet(let reason): return "the provider's JWKS cannot be read: \(reason)"
        }
    }
}
