import Foundation
import LatchkeyCrypto
import LatchkeySupport

/// Signs compact JWSs (RFC 7515 §7.1) with a key Latchkey holds: DPoP proofs (ES256, its own
/// keys) and `private_key_jwt` client assertions (ES256 or RS256, the key in `private_key_file`).
enum JWSSigner: Sendable {
    case es256(P256.Signing.PrivateKey)
    case rs256(RSA.Signing.PrivateKey)

    /// The `alg` header value (RFC 7518 §3.1).
    var algorithm: String {
        switch self {
        case .es256: return "ES256"
        case .rs256: return "RS256"
        }
    }

    /// `BASE64URL(header) . BASE64URL(claims) . BASE64URL(signature)`, the JSON with sorted keys
    /// and slashes unescaped. ES256 signatures are the 64-byte `R || S` JWS wants (RFC 7518
    /// §3.4), not DER; RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (§3.3).
    func compact(header: some Encodable, claims: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature: [UInt8]
        switch self {
        case .es256(let key): signature = Array(try key.signature(for: Array(input.utf8)).rawRepresentation)
        case .rs256(let key):
            signature = Array(try key.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .insecurePKCS1v1_5).rawRepresentation)
        }
        return input + "." + Base64URL.encode(signature)
    }
}
