internal import CLatchkeyCrypto

/// Why a cryptographic operation failed. The messages name the operation and the reason, never a
/// key, a plaintext or any other secret.
public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key of the wrong size, a point that is not on its curve, a scalar out of range, PEM that
    /// holds no key of the kind asked for.
    case invalidKey(String)
    /// A nonce, signature, sealed box or cost parameter of the wrong size or form.
    case invalidParameter(String)
    /// A sealed box whose tag does not verify (RFC 8439 §2.8): sealed with another key or other
    /// associated data, or changed since. Nothing of its plaintext is returned.
    case authenticationFailure
    /// OpenSSL failed where it should not (out of memory, no random source, not initialised).
    case libraryFailure(operation: String)

    public var description: String {
        switch self {
        case .invalidKey(let reason): return "invalid key: \(reason)"
        case .invalidParameter(let reason): return "invalid parameter: \(reason)"
        case .authenticationFailure:
            return "the sealed box does not authenticate: wrong key, other associated data, or changed since sealing"
        case .libraryFailure(let operation): return "OpenSSL's libcrypto failed to \(operation)"
        }
    }

    /// `status` as an error: `invalid` for input OpenSSL refused, `authenticationFailure` for a
    /// tag or signature that does not verify, `libraryFailure(operation)` for anything else.
    static func check(_ status: lk_crypto_status, _ operation: String, invalid: @autoclosure () -> CryptoError) throws(CryptoError) {
        switch status {
        case LK_CRYPTO_OK: return
        case LK_CRYPTO_INVALID_INPUT: throw invalid()
        case LK_CRYPTO_NOT_AUTHENTIC: throw .authenticationFailure
        default: throw .libraryFailure(operation: operation)
        }
    }
}
