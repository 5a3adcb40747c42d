import LatchkeyCrypto
import LatchkeyVault

extension VaultFormat {
    /// scrypt lives here, not in LatchkeyVault: only the full command ever derives a key (the
    /// launcher reads the vault only with a key an unlock cached), so the launcher links no scrypt.
    static func deriveKey(passphrase: Secret, salt: [UInt8], parameters: KDFParameters) throws -> SymmetricKey {
        var bytes = Array(passphrase.exposedValue.utf8)
        defer { bytes.zeroize() }
        return try KDF.Scrypt.deriveKey(
            from: bytes, salt: salt, outputByteCount: 32, rounds: 1 << Int(parameters.log2N),
            blockSize: Int(parameters.r), parallelism: Int(parameters.p), maxMemory: parameters.memoryBytes)
    }
}
