public import Foundation
import LatchkeyCrypto

/// Signs the emulator's ID tokens with RS256 and publishes the key as a JWK Set, so clients
/// verify them exactly as they verify production Firebase tokens.
package struct TokenSigner: Sendable {
    package let keyID: String
    private let key: RSA.Signing.PrivateKey

    package init() throws {
        key = try RSA.Signing.PrivateKey(keySize: .bits2048)
        keyID = Encoding.randomToken(length: 20)
    }

    /// `{"keys": [{"kty": "RSA", "alg": "RS256", "use": "sig", "kid", "n", "e"}]}`.
    package func keySet() throws -> [String: Any] {
        let primitives = try key.publicKey.getKeyPrimitives()
        return [
            "keys": [
                [
                    "kty": "RSA", "alg": "RS256", "use": "sig", "kid": keyID, "n": Encoding.base64URL(primitives.modulus),
                    "e": Encoding.base64URL(primitives.publicExponent),
                ]
            ]
        ]
    }

    package func sign(_ claims: [String: Any]) throws -> String {
        let header = ["alg": "RS256", "kid": keyID, "typ": "JWT"]
        let input =
            Encoding.base64URL(try JSONSerialization.data(withJSONObject: header, options: .sortedKeys)) + "."
            + Encoding.base64URL(try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
        let signature = try key.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Encoding.base64URL(signature.rawRepresentation)
    }

    /// The claims of a token this emulator signed; `nil` for anything else.
    package func verifiedClaims(_ token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Encoding.base64URLDecode(parts[2]),
            let payload = Encoding.base64URLDecode(parts[1])
        else { return nil }
        let input = Array((parts[0] + "." + parts[1]).utf8)
        guard
            key.publicKey.isValidSignature(
                RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        else { return nil }
        return try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
    }
}

/// Small encoders the emulator needs (it does not depend on LatchkeyCore, on purpose: it plays
/// the server, so sharing the client's helpers would hide bugs both make the same way).
package enum Encoding {
    package static func base64URL<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func base64URLDecode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if base64.count % 4 != 0 { base64 += String(repeating: "=", count: 4 - base64.count % 4) }
        return Data(base64Encoded: base64)
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// `length` random characters from [A-Za-z0-9] (`newRandomId` in the Firebase emulator).
    package static func randomToken(length: Int, extra: String = "") -> String {
        let characters = alphabet + Array(extra)
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in characters[Int.random(in: 0..<characters.count, using: &generator)] })
    }

    /// Six random digits, as in an SMS.
    package static func randomDigits(_ count: Int = 6) -> String {
        String((0..<count).map { _ in Character(String(Int.random(in: 0...9))) })
    }

    /// Decodes `application/x-www-form-urlencoded`.
    package static func formDecode(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let pieces = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pieces[0]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            let value = pieces.count > 1 ? (String(pieces[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
            result[name] = value
        }
        return result
    }

    /// Base32 (RFC 4648 §6), for TOTP secrets.
    package static func base32Decode(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0
        var value = 0
        var output: [UInt8] = []
        for character in text.uppercased() where character != "=" && character != " " {
            guard let index = alphabet.firstIndex(of: character) else { return nil }
            value = (value << 5) | index
            bits += 5
            if bits >= 8 {
                output.append(UInt8((value >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        return output
    }
}

/// RFC 6238 time-based one-time passwords (HMAC-SHA1, 30 s steps, 6 digits): what authenticator apps show.
public enum TOTP {
    /// `nil` for a date no counter stands for (before 1970, or past what 64 bits count), as well as
    /// for a secret that is not base32: a clock set wrong must not stop the demo.
    public static func code(secret base32: String, at date: Date, digits: Int = 6, step: TimeInterval = 30) -> String? {
        guard let secret = Encoding.base32Decode(base32), !secret.isEmpty, (1...9).contains(digits), step >= 1 else { return nil }
        let steps = (date.timeIntervalSince1970 / step).rounded(.down)
        guard steps >= 0, steps < 0x1p63 else { return nil }
        var counter = UInt64(steps).bigEndian
        let message = withUnsafeBytes(of: &counter) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let value =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let text = String(value % modulus)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// Whether `code` is valid at `date`, allowing one step of clock drift either way.
    package static func verify(_ code: String, secret: String, at date: Date) -> Bool {
        [-30.0, 0, 30].contains { self.code(secret: secret, at: date.addingTimeInterval($0)) == code }
    }
}
