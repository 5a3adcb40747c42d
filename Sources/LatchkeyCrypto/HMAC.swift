internal import CLatchkeyCrypto
public import FoundationEssentials

/// HMAC (RFC 2104) over `H`: the vault's key check, the emulator's pending credentials, TOTP.
public enum HMAC<H: HashFunction> {
    /// The authentication code of `data` under `key` (OpenSSL's `EVP_MAC` "HMAC").
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey) -> HashedAuthenticationCode<H> {
        var code = [UInt8](repeating: 0, count: H.byteCount)
        let status = key.withUnsafeBytes { keyBytes in
            withContiguousBytes(data) { input in
                code.withUnsafeMutableBytes {
                    lk_crypto_hmac(H.algorithm.library, keyBytes.bytes, keyBytes.count, input.bytes, input.count, $0.bytes)
                }
            }
        }
        guard status == LK_CRYPTO_OK else { preconditionFailure("OpenSSL failed to compute HMAC-\(H.algorithm)") }
        return HashedAuthenticationCode(bytes: code)
    }

    /// Whether `code` is `data`'s authentication code under `key`, compared in constant time.
    public static func isValidAuthenticationCode<C: ContiguousBytes, D: DataProtocol>(
        _ code: C, authenticating data: D, using key: SymmetricKey
    ) -> Bool {
        let expected = authenticationCode(for: data, using: key)
        return code.withUnsafeBytes { given in
            given.count == expected.bytes.count
                && expected.bytes.withUnsafeBytes { lk_crypto_equal(given.baseAddress, $0.baseAddress, given.count) == 1 }
        }
    }
}

/// An HMAC over `H`: its bytes, compared in constant time.
public struct HashedAuthenticationCode<H: HashFunction>: RandomAccessCollection, Hashable, Sendable, ContiguousBytes {
    let bytes: [UInt8]

    public var startIndex: Int { 0 }
    public var endIndex: Int { bytes.count }
    public subscript(position: Int) -> UInt8 { bytes[position] }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try bytes.withUnsafeBytes(body) }

    public static func == (lhs: HashedAuthenticationCode, rhs: HashedAuthenticationCode) -> Bool {
        lhs.bytes.count == rhs.bytes.count
            && lhs.bytes.withUnsafeBytes { left in
                rhs.bytes.withUnsafeBytes { lk_crypto_equal(left.baseAddress, $0.baseAddress, left.count) == 1 }
            }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
}
