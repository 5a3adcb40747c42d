internal import CLatchkeyCrypto
import FoundationEssentials

/// Calls `body` with `data`'s bytes in one buffer: its own storage when it is contiguous ([UInt8],
/// Data), else a copy that is overwritten afterwards (the bytes may be a secret).
func withContiguousBytes<D: DataProtocol, Result>(_ data: D, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    if let direct = data.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return direct }
    var copy = [UInt8](data)
    defer { copy.withUnsafeMutableBytes { lk_crypto_cleanse($0.baseAddress, $0.count) } }
    return copy.withUnsafeBytes(body)
}

extension UnsafeRawBufferPointer {
    /// The start as the C functions take it (`NULL` for an empty buffer, which they accept).
    var bytes: UnsafePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }
}

extension UnsafeMutableRawBufferPointer {
    var bytes: UnsafeMutablePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }
}

/// A buffer OpenSSL allocated (PEM, DER, a big number), copied out and then cleared and freed.
func takeBuffer(_ pointer: UnsafeMutablePointer<UInt8>?, count: Int) -> Data {
    guard let pointer else { return Data() }
    defer { lk_crypto_free(pointer, count) }
    return Data(bytes: pointer, count: count)
}
