internal import CLatchkeyCrypto
import FoundationEssentials

/// One OpenSSL key (`EVP_PKEY`), freed (its private numbers cleared) with the last reference.
/// Never changed after it is made, so it is shared freely: each operation makes its own context.
final class KeyHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// The key a C function made (`pointer`, `status`), or `invalid` / a library failure from its status.
    static func adopt(
        _ pointer: OpaquePointer?, _ status: lk_crypto_status, _ operation: String, invalid: @autoclosure () -> CryptoError
    ) throws(CryptoError) -> KeyHandle {
        try CryptoError.check(status, operation, invalid: invalid())
        guard let pointer else { throw .libraryFailure(operation: operation) }
        return KeyHandle(pointer)
    }

    /// The unencrypted private key of `kind` in `pem` (PKCS #8, or the kind's own PEM), the text's
    /// copy cleared once read; `refusal` for anything else.
    static func privateKey(fromPEM pem: String, _ kind: lk_crypto_key_kind, refusal: String) throws(CryptoError) -> KeyHandle {
        var text = Array(pem.utf8)
        defer { text.withUnsafeMutableBytes { lk_crypto_cleanse($0.baseAddress, $0.count) } }
        var pointer: OpaquePointer?
        let status = text.withUnsafeBytes { lk_crypto_private_key_from_pem($0.bytes, $0.count, kind, &pointer) }
        return try adopt(pointer, status, "read a PEM private key", invalid: .invalidKey(refusal))
    }

    deinit { lk_crypto_key_free(pointer) }

    var bits: Int { Int(lk_crypto_key_bits(pointer)) }

    /// The key as unencrypted PKCS #8 PEM ("BEGIN PRIVATE KEY").
    var privatePEM: String {
        var pem: UnsafeMutablePointer<UInt8>?
        var count = 0
        guard lk_crypto_private_key_pem(pointer, &pem, &count) == LK_CRYPTO_OK else {
            preconditionFailure("OpenSSL failed to write a private key as PEM")
        }
        return String(decoding: takeBuffer(pem, count: count), as: UTF8.self)
    }

    /// The public key as a DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7).
    var publicDER: Data {
        var der: UnsafeMutablePointer<UInt8>?
        var count = 0
        guard lk_crypto_public_key_der(pointer, &der, &count) == LK_CRYPTO_OK else {
            preconditionFailure("OpenSSL failed to write a public key as DER")
        }
        return takeBuffer(der, count: count)
    }
}
