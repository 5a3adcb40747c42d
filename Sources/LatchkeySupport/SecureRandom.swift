import Crypto

/// Random bytes from the system CSPRNG (swift-crypto's `SymmetricKey` draws from it).
package enum SecureRandom {
    package static func bytes(_ count: Int) -> [UInt8] {
        let key = SymmetricKey(size: SymmetricKeySize(bitCount: count * 8))
        return key.withUnsafeBytes { Array($0) }
    }

    /// `count` random bytes as base64url: `state`, `nonce` and PKCE verifiers.
    package static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }
}
