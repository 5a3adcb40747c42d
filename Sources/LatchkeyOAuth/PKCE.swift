import LatchkeyCrypto
import LatchkeySupport
public import LatchkeyVault

/// Proof Key for Code Exchange (RFC 7636), S256 only: `plain` would give the code away.
public struct PKCE: Sendable {
    /// `code_verifier` (§4.1): 32 CSPRNG bytes, base64url, 43 characters.
    public let verifier: Secret
    /// `code_challenge` (§4.2): BASE64URL(SHA256(ASCII(code_verifier))).
    public let challenge: String
    /// `code_challenge_method`.
    public static let method = "S256"

    /// A fresh verifier from the system CSPRNG.
    public init() {
        self.init(verifier: SecureRandom.token(byteCount: 32))
    }

    /// A given verifier, for the RFC 7636 Appendix B test vector.
    public init(verifier: String) {
        self.verifier = Secret(verifier)
        self.challenge = Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
    }
}
