public import FoundationEssentials

/// The unlocked vault key, kept in the kernel keyring so `latchkey token` in scripts needs no
/// passphrase (and no half-second of scrypt) until the unlock expires; `latchkey lock` drops it.
///
/// Payload: expiry (u64, Unix seconds), the header's salt and KDF parameters, then the 32-byte
/// key. The salt and parameters tie it to one vault file: a vault made anew with the same path
/// does not accept a stale key, and the header's key check is verified on every use anyway.
public struct VaultKeyCache: Sendable {
    /// One entry per vault path, so several vaults (and test runs) never share a key.
    public let description: String

    public init(vaultPath: String) {
        // Not `String(format:)`: its first use (CFString formatting) cost every command 0.15 ms.
        let digest = VaultCrypto.SHA256.hash(Array(vaultPath.utf8)).prefix(12).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        description = "latchkey:vault-key:\(digest)"
    }

    package struct Entry {
        package var expiresAt: Date
        package var salt: [UInt8]
        package var parameters: VaultFormat.KDFParameters
        package var key: VaultKey

        package init(expiresAt: Date, salt: [UInt8], parameters: VaultFormat.KDFParameters, key: VaultKey) {
            self.expiresAt = expiresAt
            self.salt = salt
            self.parameters = parameters
            self.key = key
        }
    }

    package func store(_ entry: Entry) throws(KernelKeyring.Failure) {
        var payload: [UInt8] = []
        let seconds = UInt64(max(0, entry.expiresAt.timeIntervalSince1970))
        payload += (0..<8).reversed().map { UInt8((seconds >> (UInt64($0) * 8)) & 0xFF) }
        payload += [UInt8(entry.salt.count)] + entry.salt + [entry.parameters.log2N]
        payload += [entry.parameters.r, entry.parameters.p].flatMap { value in
            (0..<4).reversed().map { UInt8((value >> (UInt32($0) * 8)) & 0xFF) }
        }
        payload += entry.key.withUnsafeBytes { Array($0) }
        try KernelKeyring.store(payload, description: description, timeout: -Int(wholeSeconds: -entry.expiresAt.timeIntervalSinceNow))
    }

    package func load() -> Entry? {
        guard var payload = KernelKeyring.read(description: description) else { return nil }
        defer { payload.zeroize() }
        var reader = ByteReader(bytes: payload, offset: 0)
        guard let expiryBytes = reader.take(8), let saltCount = reader.u8(), let salt = reader.take(Int(saltCount)),
            let log2N = reader.u8(), let r = reader.u32(), let p = reader.u32(), var keyBytes = reader.take(32)
        else { return nil }
        defer { keyBytes.zeroize() }
        guard let key = VaultKey(bytes: keyBytes) else { return nil }
        let seconds = expiryBytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Entry(
            expiresAt: Date(timeIntervalSince1970: TimeInterval(seconds)), salt: salt,
            parameters: VaultFormat.KDFParameters(log2N: log2N, r: r, p: p), key: key)
    }

    /// The cached key when it is the one `header` was sealed with: same salt and parameters, and
    /// the header's key check verified (in constant time); `nil` when locked or another vault's.
    package func key(for header: VaultFormat.Header) -> VaultKey? {
        guard let cached = load(), cached.salt == header.salt, cached.parameters == header.kdf,
            constantTimeEqual(VaultFormat.keyCheck(for: cached.key), header.keyCheck)
        else { return nil }
        return cached.key
    }

    /// When the cached key expires, or `nil` when the vault is locked.
    public var unlockedUntil: Date? { load().map(\.expiresAt) }

    /// Locks: the key is destroyed in the kernel at once.
    @discardableResult
    public func drop() -> Bool { KernelKeyring.remove(description: description) }
}
