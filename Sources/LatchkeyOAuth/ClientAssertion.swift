import Foundation
import LatchkeyCrypto
import LatchkeySupport
import LatchkeyVault

/// `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): instead of a
/// secret, each token request carries a short-lived JWT signed with the client's private key, so
/// nothing the server could leak lets anyone else act as the client.
package struct ClientAssertion {
    /// `client_assertion_type` (RFC 7523 §2.2).
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// How long an assertion is good for: one request, with room for clock skew; a stolen one
    /// is soon useless, and servers that remember `jti` need to remember it only that long.
    static let lifetime = 60

    let signer: JWSSigner
    let keyID: String?

    /// The key in `pem`: P-256 (ES256) or RSA of at least 2048 bits (RS256), in SEC 1, PKCS #1
    /// or PKCS #8 PEM. `reason` of the error says which, never the key.
    init(pem: Secret, keyID: String?) throws(SecretFile.Unusable) {
        let text = pem.exposedValue
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: text) {
            signer = .es256(key)
        } else if let key = try? RSA.Signing.PrivateKey(unsafePEMRepresentation: text) {
            guard key.keySizeInBits >= 2048 else {
                throw SecretFile.Unusable(reason: "its RSA key has \(key.keySizeInBits) bits; RS256 needs at least 2048 (RFC 7518 §3.3)")
            }
            signer = .rs256(key)
        } else {
            throw SecretFile.Unusable(
                reason: "it holds no PEM private key Latchkey can sign with (a P-256 key for ES256, or an RSA key for RS256)")
        }
        self.keyID = keyID
    }

    /// An assertion for one request to `audience` (the token endpoint, OpenID Connect Core §9):
    /// the client as issuer and subject, a fresh `jti`, issued now, expiring `lifetime` later.
    func assertion(clientID: String, audience: URL, at time: Date) -> String {
        let issuedAt = Int(time.timeIntervalSince1970)
        let claims = Claims(
            iss: clientID, sub: clientID, aud: audience.absoluteString, jti: SecureRandom.token(byteCount: 16), iat: issuedAt,
            exp: issuedAt + Self.lifetime)
        // Signing two fixed structs with a key that parsed cannot fail.
        return try! signer.compact(header: Header(alg: signer.algorithm, kid: keyID), claims: claims)
    }

    /// The token request's client authentication fields.
    func form(clientID: String, audience: URL, at time: Date) -> [(String, String)] {
        [
            ("client_id", clientID), ("client_assertion_type", Self.type),
            ("client_assertion", assertion(clientID: clientID, audience: audience, at: time)),
        ]
    }

    struct Header: Encodable {
        var alg: String
        var typ = "JWT"
        var kid: String?
    }

    /// RFC 7523 §3's claims.
    struct Claims: Encodable {
        var iss: String
        var sub: String
        var aud: String
        var jti: String
        var iat: Int
        var exp: Int
    }
}
