#if canImport(Glibc)
    import Glibc
#endif

/// The vault's 256-bit key: what scrypt derives from the passphrase (`VaultFormat.deriveKey`, in
/// LatchkeyKeystore) and what an unlock caches in the kernel keyring (`VaultKeyCache`). Its bytes
/// live in one allocation of their own, overwritten when the last copy of the key goes away.
package struct VaultKey: Sendable {
    /// The key's bytes; immutable once filled, so copies share them.
    final class Storage: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer

        init(_ bytes: UnsafeRawBufferPointer) {
            buffer = .allocate(byteCount: VaultKey.byteCount, alignment: 16)
            buffer.copyMemory(from: bytes)
        }

        deinit {
            VaultCrypto.erase(buffer)
            buffer.deallocate()
        }
    }

    package static let byteCount = 32

    let storage: Storage

    /// A copy of `bytes`; `nil` unless they are exactly 32.
    package init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.byteCount else { return nil }
        storage = Storage(bytes)
    }

    /// A copy of `bytes`; `nil` unless they are exactly 32.
    package init?(bytes: [UInt8]) {
        guard let key = bytes.withUnsafeBytes({ VaultKey(bytes: $0) }) else { return nil }
        self = key
    }

    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage.buffer))
    }
}
