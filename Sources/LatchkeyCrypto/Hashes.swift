internal import CLatchkeyCrypto
public import FoundationEssentials

/// The hash functions Latchkey uses (FIPS 180-4).
public enum HashAlgorithm: Sendable {
    case sha1, sha256, sha384, sha512

    var library: lk_crypto_hash {
        switch self {
        case .sha1: return LK_CRYPTO_SHA1
        case .sha256: return LK_CRYPTO_SHA256
        case .sha384: return LK_CRYPTO_SHA384
        case .sha512: return LK_CRYPTO_SHA512
        }
    }

    /// The digest's size in bytes.
    public var byteCount: Int {
        switch self {
        case .sha1: return 20
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }
}

/// A hash function, one-shot (`hash(data:)`) or incremental (`init`, `update(data:)`,
/// `finalize()`); a value type: a copy goes on from where the original was.
public protocol HashFunction: Sendable {
    static var algorithm: HashAlgorithm { get }
    init()
    mutating func update<D: DataProtocol>(data: D)
    /// The digest of everything given so far; the hash can go on after it.
    func finalize() -> Digest<Self>
}

extension HashFunction {
    /// The digest's size in bytes.
    public static var byteCount: Int { algorithm.byteCount }

    /// The digest of `data` (`EVP_Digest`).
    public static func hash<D: DataProtocol>(data: D) -> Digest<Self> {
        var digest = [UInt8](repeating: 0, count: byteCount)
        let status = withContiguousBytes(data) { input in
            digest.withUnsafeMutableBytes { lk_crypto_hash_oneshot(algorithm.library, input.bytes, input.count, $0.bytes) }
        }
        guard status == LK_CRYPTO_OK else { preconditionFailure("OpenSSL failed to compute \(algorithm)") }
        return Digest(bytes: digest)
    }
}

/// A digest of `H`: its bytes, compared in constant time.
public struct Digest<H: HashFunction>: RandomAccessCollection, Hashable, Sendable, ContiguousBytes, CustomStringConvertible {
    let bytes: [UInt8]

    init(bytes: [UInt8]) {
        precondition(bytes.count == H.byteCount)
        self.bytes = bytes
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { bytes.count }
    public subscript(position: Int) -> UInt8 { bytes[position] }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try bytes.withUnsafeBytes(body) }

    public static func == (lhs: Digest, rhs: Digest) -> Bool {
        lhs.bytes.withUnsafeBytes { left in rhs.bytes.withUnsafeBytes { lk_crypto_equal(left.baseAddress, $0.baseAddress, left.count) == 1 }
        }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// The digest in lowercase hexadecimal: a name for a file or secret that says nothing of its input.
    public var hexadecimal: String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    public var description: String { "\(H.algorithm) digest: " + hexadecimal }
}

/// An incremental hash's OpenSSL state (`EVP_MD_CTX`), copied before a shared one is changed.
struct HashState: @unchecked Sendable {
    final class Context {
        let pointer: OpaquePointer

        init(pointer: OpaquePointer) { self.pointer = pointer }

        deinit { lk_crypto_hash_free(pointer) }
    }

    private var context: Context
    let algorithm: HashAlgorithm

    init(_ algorithm: HashAlgorithm) {
        var pointer: OpaquePointer?
        guard lk_crypto_hash_new(algorithm.library, &pointer) == LK_CRYPTO_OK, let pointer else {
            preconditionFailure("OpenSSL failed to start \(algorithm)")
        }
        self.algorithm = algorithm
        context = Context(pointer: pointer)
    }

    mutating func update<D: DataProtocol>(_ data: D) {
        if !isKnownUniquelyReferenced(&context) {
            var copy: OpaquePointer?
            guard lk_crypto_hash_copy(context.pointer, &copy) == LK_CRYPTO_OK, let copy else {
                preconditionFailure("OpenSSL failed to copy a \(algorithm) state")
            }
            context = Context(pointer: copy)
        }
        let pointer = context.pointer
        let status = withContiguousBytes(data) { lk_crypto_hash_update(pointer, $0.bytes, $0.count) }
        guard status == LK_CRYPTO_OK else { preconditionFailure("OpenSSL failed to compute \(algorithm)") }
    }

    func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: algorithm.byteCount)
        guard digest.withUnsafeMutableBytes({ lk_crypto_hash_final(context.pointer, $0.bytes) }) == LK_CRYPTO_OK else {
            preconditionFailure("OpenSSL failed to compute \(algorithm)")
        }
        return digest
    }
}

/// SHA-256 (FIPS 180-4 §6.2): PKCE, JWK thumbprints, `ath`, ES256 and RS256, the vault's key check.
public struct SHA256: HashFunction {
    public static let algorithm = HashAlgorithm.sha256
    var state = HashState(.sha256)
    public init() {}
    public mutating func update<D: DataProtocol>(data: D) { state.update(data) }
    public func finalize() -> Digest<SHA256> { Digest(bytes: state.finalize()) }
}

/// SHA-384 (FIPS 180-4 §6.5): ES384 and RS384 ID tokens.
public struct SHA384: HashFunction {
    public static let algorithm = HashAlgorithm.sha384
    var state = HashState(.sha384)
    public init() {}
    public mutating func update<D: DataProtocol>(data: D) { state.update(data) }
    public func finalize() -> Digest<SHA384> { Digest(bytes: state.finalize()) }
}

/// SHA-512 (FIPS 180-4 §6.4): RS512 ID tokens.
public struct SHA512: HashFunction {
    public static let algorithm = HashAlgorithm.sha512
    var state = HashState(.sha512)
    public init() {}
    public mutating func update<D: DataProtocol>(data: D) { state.update(data) }
    public func finalize() -> Digest<SHA512> { Digest(bytes: state.finalize()) }
}

/// Algorithms kept only where a protocol still asks for them.
public enum Insecure {
    /// SHA-1 (FIPS 180-4 §6.1), broken for collisions: only inside HMAC for TOTP (RFC 6238 §1.2),
    /// where collisions do not matter.
    public struct SHA1: HashFunction {
        public static let algorithm = HashAlgorithm.sha1
        var state = HashState(.sha1)
        public init() {}
        public mutating func update<D: DataProtocol>(data: D) { state.update(data) }
        public func finalize() -> Digest<SHA1> { Digest(bytes: state.finalize()) }
    }
}
