import LatchkeyCrypto

/// Random bytes from OpenSSL's CSPRNG (`RAND_bytes`, seeded by the kernel).
package enum SecureRandom {
    package static func bytes(_ count: Int) -> [UInt8] {
        CryptoLibrary.randomBytes(count)
    }

    /// `count` random bytes as base64url: `state`, `nonce` and PKCE verifiers.
    package static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }
}
