import LatchkeyCrypto
import LatchkeyVault

extension VaultFormat {
    /// scrypt lives here, not in LatchkeyVault: only the full command ever derives a key (the
    /// launcher reads the vault only with a key an unlock cached), so the launcher links no scrypt.
    static func deriveKey(passphrase: Secret, salt: [UInt8], parameters: KDFParameters) throws(CryptoError) -> VaultKey {
        var bytes = Array(passphrase.exposedValue.utf8)
        defer { bytes.zeroize() }
        // OpenSSL's scrypt (RFC 7914); its output is cleared when `derived` goes.
        let derived = try KDF.Scrypt.deriveKey(
            from: bytes, salt: salt, outputByteCount: VaultKey.byteCount, rounds: 1 << Int(parameters.log2N),
            blockSize: Int(parameters.r), parallelism: Int(parameters.p), maxMemory: parameters.memoryBytes)
        guard let key = derived.withUnsafeBytes({ VaultKey(bytes: $0) }) else {
            throw .libraryFailure(operation: "derive a \(VaultKey.byteCount)-byte key with scrypt")
        }
        return key
    }
}
