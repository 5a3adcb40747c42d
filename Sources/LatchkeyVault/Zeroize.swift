#if canImport(Glibc)
    import Glibc
#endif

/// Overwrites secret bytes before their buffer is freed, so the plaintext vault and the
/// passphrase do not linger in freed heap memory. (A `String` cannot be wiped in place; the byte
/// buffers that pass through the vault can.) `explicit_bzero` is never optimised away.
extension Array where Element == UInt8 {
    package mutating func zeroize() {
        withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            explicit_bzero(base, buffer.count)
        }
    }
}
