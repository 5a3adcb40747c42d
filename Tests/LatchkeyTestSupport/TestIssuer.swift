public import Foundation
import LatchkeyCrypto
public import LatchkeyVault

/// Signs ID tokens the way an OpenID provider does, with keys made for the test run, so engine
/// tests can hand the real verifier tokens it must accept or refuse.
public struct TestIssuer: Sendable {
    public let issuer: String
    public let keyID: String
    private let key: RSA.Signing.PrivateKey

    /// RSA key generation is slow: one key per key ID for the whole run.
    private static let keys: [String: RSA.Signing.PrivateKey] = [
        "key-1": try! RSA.Signing.PrivateKey(keySize: .bits2048),
        "key-2": try! RSA.Signing.PrivateKey(keySize: .bits2048),
    ]

    public init(issuer: String = "https://idp.example.com", keyID: String = "key-1") {
        self.issuer = issuer
        self.keyID = keyID
        key = Self.keys[keyID]!
    }

    /// This issuer after a key rotation: same issuer, the other key.
    public var rotated: TestIssuer { TestIssuer(issuer: issuer, keyID: keyID == "key-1" ? "key-2" : "key-1") }

    /// The JWKS document with this issuer's current public key.
    public var keySetJSON: String {
        let primitives = try! key.publicKey.getKeyPrimitives()
        return """
            {"keys":[{"kty":"RSA","kid":"\(keyID)","use":"sig","alg":"RS256","n":"\(Self.base64URL(primitives.modulus))","e":"\(Self.base64URL(primitives.publicExponent))"}]}
            """
    }

    /// An RS256 ID token for `subject` at `now`, with `extra` claims laid over the usual ones.
    public func idToken(
        subject: String, audience: String, nonce: String?, now: Date, lifetime: TimeInterval = 3600, extra: [String: Any] = [:]
    ) -> Secret {
        var claims: [String: Any] = [
            "iss": issuer, "sub": subject, "aud": audience, "iat": Int(now.timeIntervalSince1970),
            "exp": Int(now.timeIntervalSince1970 + lifetime), "email": "\(subject)@example.com",
        ]
        if let nonce { claims["nonce"] = nonce }
        claims.merge(extra) { $1 }
        let header = Self.encode(["alg": "RS256", "typ": "JWT", "kid": keyID])
        let input = header + "." + Self.encode(claims)
        let signature = try! key.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .insecurePKCS1v1_5)
        return Secret(input + "." + Self.base64URL(signature.rawRepresentation))
    }

    private static func encode(_ object: [String: Any]) -> String {
        base64URL(try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys))
    }

    /// Base64url without padding (RFC 7515 §2), written here rather than borrowed from the code under test.
    public static func base64URL<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded base64url, written here for the same reason.
    public static func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
