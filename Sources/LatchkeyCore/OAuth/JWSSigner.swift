import Crypto
import Foundation

/// Signs compact JWSs (RFC 7515 §7.1) with one of Latchkey's own keys: DPoP proofs (ES256).
enum JWSSigner: Sendable {
    case es256(P256.Signing.PrivateKey)

    /// `BASE64URL(header) . BASE64URL(claims) . BASE64URL(signature)`, the JSON with sorted keys
    /// and slashes unescaped. ES256 signatures are the 64-byte `R || S` JWS wants (RFC 7518
    /// §3.4), not DER.
    func compact(header: some Encodable, claims: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature: [UInt8]
        switch self {
        case .es256(let key): signature = Array(try key.signature(for: Array(input.utf8)).rawRepresentation)
        }
        return input + "." + Base64URL.encode(signature)
    }
}
