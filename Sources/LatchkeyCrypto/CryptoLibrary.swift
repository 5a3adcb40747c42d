internal import CLatchkeyCrypto

/// OpenSSL's libcrypto, as this process uses it.
///
/// Every operation of this module initialises OpenSSL first, once, without its configuration
/// file (`OPENSSL_INIT_NO_LOAD_CONFIG`): `OPENSSL_CONF`, and through it `OPENSSL_MODULES` and
/// `OPENSSL_ENGINES`, never make this process load a setting, provider or engine; the algorithms
/// are the default provider's, built into libcrypto. Whichever part of a process initialises
/// OpenSSL first decides whether a configuration is read, so a process that shares libcrypto with
/// another library (latchkey-cli, whose libcurl starts libssl in `curl_global_init`) calls
/// `initialise()` before that library is loaded.
public enum CryptoLibrary {
    /// Initialises OpenSSL without its configuration, if nothing has initialised it yet.
    public static func initialise() throws(CryptoError) {
        try CryptoError.check(lk_crypto_initialise(), "initialise", invalid: .libraryFailure(operation: "initialise"))
    }

    /// Fills `buffer` from OpenSSL's CSPRNG (`RAND_bytes`, seeded by the kernel); traps if there
    /// is no random source, as nothing that needs a key or nonce could go on.
    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        guard lk_crypto_random(base.assumingMemoryBound(to: UInt8.self), buffer.count) == LK_CRYPTO_OK else {
            preconditionFailure("OpenSSL's random generator failed")
        }
    }

    /// `count` random bytes.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { fillRandom($0) }
        return bytes
    }
}
