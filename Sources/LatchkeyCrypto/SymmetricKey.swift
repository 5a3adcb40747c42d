internal import CLatchkeyCrypto
public import FoundationEssentials

/// A symmetric key's size.
public struct SymmetricKeySize: Sendable, Equatable {
    public let bitCount: Int

    /// `bitCount`, a whole number of bytes.
    public init(bitCount: Int) {
        precondition(bitCount >= 0 && bitCount % 8 == 0, "a symmetric key is a whole number of bytes")
        self.bitCount = bitCount
    }

    public static let bits128 = SymmetricKeySize(bitCount: 128)
    public static let bits192 = SymmetricKeySize(bitCount: 192)
    public static let bits256 = SymmetricKeySize(bitCount: 256)
}

/// Key bytes for HMAC, ChaCha20-Poly1305 and what scrypt derives. Its bytes live in one
/// allocation of their own, overwritten when the last copy of the key goes away.
public struct SymmetricKey: Sendable, ContiguousBytes, Equatable {
    /// The key's bytes, owned here; immutable once filled, so copies share them.
    final class Storage: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer

        init(count: Int) {
            buffer = .allocate(byteCount: count, alignment: 16)
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
        }

        deinit {
            lk_crypto_cleanse(buffer.baseAddress, buffer.count)
            buffer.deallocate()
        }
    }

    let storage: Storage

    /// A key holding a copy of `data`.
    public init<D: ContiguousBytes>(data: D) {
        storage = data.withUnsafeBytes { bytes in
            let storage = Storage(count: bytes.count)
            if bytes.count > 0 { storage.buffer.copyMemory(from: bytes) }
            return storage
        }
    }

    /// A new random key of `size` from OpenSSL's CSPRNG.
    public init(size: SymmetricKeySize) {
        storage = Storage(count: size.bitCount / 8)
        CryptoLibrary.fillRandom(storage.buffer)
    }

    /// A key `count` bytes long that `fill` writes (what scrypt derives goes straight in here).
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> Void) throws(CryptoError) {
        storage = Storage(count: count)
        try fill(storage.buffer)
    }

    public var bitCount: Int { storage.buffer.count * 8 }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage.buffer))
    }

    /// In constant time for keys of one size.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        lhs.storage.buffer.count == rhs.storage.buffer.count
            && lk_crypto_equal(lhs.storage.buffer.baseAddress, rhs.storage.buffer.baseAddress, lhs.storage.buffer.count) == 1
    }
}
