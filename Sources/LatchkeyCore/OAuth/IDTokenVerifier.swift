public import Foundation

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

    /// Verifies `token` with `keys`; `nonce` is required when the request sent one.
    public func verify(_ token: Secret, keys: JSONWebKeySet, nonce: Secret?, now: Date) throws(IDTokenError) -> IDTokenClaims {
        let parts = token.exposedValue.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw .malformed("not a compact JWS with three base64url parts") }
        guard let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any] else {
            throw .malformed("the header is not a JSON object")
        }
        guard let algorithmName = header["alg"] as? String else { throw .malformed("the header has no alg") }
        guard let algorithm = JWSAlgorithm(rawValue: algorithmName) else {
            throw .refusedAlgorithm(TerminalText.sanitized(algorithmName, maxLength: 20))
        }
        if header["crit"] != nil { throw .malformed("the header has critical extensions Latchkey does not understand") }
        let keyID = header["kid"] as? String
        let candidates = keys.keys.filter { $0.canVerify(algorithm, keyID: keyID) }
        guard !candidates.isEmpty else { throw .unknownKey(keyID: keyID.map { TerminalText.sanitized($0, maxLength: 80) }) }
        let signingInput = Array((parts[0] + "." + parts[1]).utf8)
        guard candidates.contains(where: { $0.verify(Array(signature), over: signingInput, algorithm: algorithm) }) else {
            throw .badSignature
        }

        guard let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any] else {
            throw .malformed("the claims are not a JSON object")
        }
        guard let tokenIssuer = claims["iss"] as? String, tokenIssuer == issuer else {
            throw .claim("iss", "is \(TerminalText.sanitized(claims["iss"] as? String ?? "(missing)", maxLength: 200)), expected \(issuer)")
        }
        guard let subject = claims["sub"] as? String, !subject.isEmpty else { throw .claim("sub", "is missing") }
        let audiences: [String]
        switch claims["aud"] {
        case let single as String: audiences = [single]
        case let many as [String]: audiences = many
        default: throw .claim("aud", "is missing")
        }
        guard audiences.contains(clientID) else { throw .claim("aud", "does not contain this client's client_id") }
        let authorizedParty = claims["azp"] as? String
        if audiences.count > 1 && authorizedParty == nil { throw .claim("azp", "is required when aud has several values") }
        if let authorizedParty, authorizedParty != clientID { throw .claim("azp", "is not this client's client_id") }
        guard let expiry = JSONScalar.number(claims["exp"]) else { throw .claim("exp", "is missing") }
        guard now.timeIntervalSince1970 < expiry + allowedSkew else { throw .claim("exp", "is in the past: the ID token has expired") }
        guard let issuedAt = JSONScalar.number(claims["iat"]) else { throw .claim("iat", "is missing") }
        guard issuedAt <= now.timeIntervalSince1970 + allowedSkew else {
            throw .claim("iat", "is in the future; check this machine's clock")
        }
        if let nonce {
            guard let tokenNonce = claims["nonce"] as? String, nonce.constantTimeEquals(tokenNonce) else {
                throw .claim("nonce", "does not match the one sent with this sign-in (replayed ID token?)")
            }
        }
        return IDTokenClaims(
            issuer: tokenIssuer, subject: subject, email: claims["email"] as? String, name: claims["name"] as? String,
            preferredUsername: claims["preferred_username"] as? String, expiresAt: Date(timeIntervalSince1970: expiry))
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
