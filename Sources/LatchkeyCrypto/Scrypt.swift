internal import CLatchkeyCrypto
public import FoundationEssentials

/// Key derivation functions.
public enum KDF {
    /// scrypt (RFC 7914): the vault key from its passphrase.
    public enum Scrypt {
        /// `outputByteCount` bytes of scrypt(`password`, `salt`, N = `rounds`, r = `blockSize`,
        /// p = `parallelism`) (RFC 7914 §6), through OpenSSL's `EVP_PBE_scrypt`. N must be a
        /// power of two above 1. `maxMemory` bounds what may be allocated (128·r·(N + p + 2)
        /// bytes are needed); without it, OpenSSL's 32 MiB, too little for N = 2^17, r = 8.
        public static func deriveKey<P: DataProtocol, S: DataProtocol>(
            from password: P, salt: S, outputByteCount: Int, rounds: Int, blockSize: Int, parallelism: Int, maxMemory: Int? = nil
        ) throws(CryptoError) -> SymmetricKey {
            guard outputByteCount > 0, rounds > 1, rounds & (rounds - 1) == 0, blockSize > 0, parallelism > 0, (maxMemory ?? 0) >= 0 else {
                throw .invalidParameter(
                    "scrypt needs N a power of two above 1 and r, p and the output length positive (N \(rounds), r \(blockSize), p \(parallelism))"
                )
            }
            return try SymmetricKey(count: outputByteCount) { (output) throws(CryptoError) in
                let status = withContiguousBytes(password) { passwordBytes in
                    withContiguousBytes(salt) { saltBytes in
                        lk_crypto_scrypt(
                            passwordBytes.bytes, passwordBytes.count, saltBytes.bytes, saltBytes.count, UInt64(rounds), UInt64(blockSize),
                            UInt64(parallelism), UInt64(maxMemory ?? 0), output.bytes, output.count)
                    }
                }
                try CryptoError.check(
                    status, "derive a key with scrypt",
                    invalid: .invalidParameter(
                        "scrypt refused N \(rounds), r \(blockSize), p \(parallelism) (beyond the memory allowed, \(maxMemory ?? 32 << 20) bytes?)"
                    ))
            }
        }
    }
}
