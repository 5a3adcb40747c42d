#if canImport(Glibc)
    import Glibc
#endif

/// The vault's own cryptography, in Swift: SHA-256 (FIPS 180-4), HMAC-SHA256 (RFC 2104) and
/// ChaCha20-Poly1305 (RFC 8439), the three things opening or sealing a vault takes.
///
/// Why not LatchkeyCrypto (OpenSSL's libcrypto) like everything else: the static launcher opens the
/// vault itself when it has a cached key but no token copy, and OpenSSL 3 spends 1.5–2 ms setting up
/// its default provider on the first use of a digest and a cipher (measured on the 2-core machine:
/// the launcher's answer from the vault took 5.1 ms median with libcrypto.a linked in, 2.4 ms with
/// swift-crypto); with this code the launcher links no OpenSSL at all. The full command uses the
/// same code for the vault, so the two always read and write one format alike; everything else
/// (scrypt, signatures, random bytes) is LatchkeyCrypto's.
///
/// Everything here runs in time that depends only on the lengths, never on key or data bytes, and
/// is checked against the RFCs' vectors and against OpenSSL (`VaultCryptoTests`).
package enum VaultCrypto {}

extension VaultCrypto {
    /// SHA-256 (FIPS 180-4 §6.2), incremental; a value type.
    package struct SHA256: Sendable {
        package static let byteCount = 32

        private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
        )
        /// Bytes not yet compressed, fewer than a block.
        private var pending: [UInt8] = []
        private var length: UInt64 = 0

        package init() {}

        /// The digest of `bytes`.
        package static func hash(_ bytes: [UInt8]) -> [UInt8] {
            var hash = SHA256()
            hash.update(bytes)
            return hash.finalize()
        }

        package mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        package mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            length &+= UInt64(bytes.count)
            var offset = 0
            if !pending.isEmpty {
                offset = min(64 - pending.count, bytes.count)
                pending += bytes[0..<offset]
                guard pending.count == 64 else { return }
                pending.withUnsafeBytes { compress($0.baseAddress!) }
                pending.removeAll(keepingCapacity: true)
            }
            while bytes.count - offset >= 64 {
                compress(base + offset)
                offset += 64
            }
            if offset < bytes.count { pending += bytes[offset...] }
        }

        /// The digest of everything given so far; the hash can go on after it.
        package func finalize() -> [UInt8] {
            var final = self
            let bits = length &* 8
            // 0x80, zeros up to 56 bytes into the last block, then the length in bits (§5.1.1).
            var tail: [UInt8] = [0x80] + [UInt8](repeating: 0, count: (119 - Int(length % 64)) % 64)
            tail += (0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> (UInt64($0) * 8)) }
            final.update(tail)
            let words = [
                final.state.0, final.state.1, final.state.2, final.state.3, final.state.4, final.state.5, final.state.6, final.state.7,
            ]
            return words.flatMap { word in (0..<4).reversed().map { UInt8(truncatingIfNeeded: word >> (UInt32($0) * 8)) } }
        }

        private static let k: [UInt32] = [
            0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
            0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
            0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
            0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
            0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
            0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
            0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
            0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
        ]

        /// One 64-byte block at `block` (§6.2.2).
        private mutating func compress(_ block: UnsafeRawPointer) {
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
                let w = schedule.baseAddress!
                for t in 0..<16 { w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t * 4, as: UInt32.self)) }
                for t in 16..<64 {
                    let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
                    let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
                    w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                }
                var (a, b, c, d, e, f, g, h) = state
                Self.k.withUnsafeBufferPointer { k in
                    for t in 0..<64 {
                        let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[t] &+ w[t]
                        let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                        h = g
                        g = f
                        f = e
                        e = d &+ t1
                        d = c
                        c = b
                        b = a
                        a = t1 &+ t2
                    }
                }
                state = (
                    state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h
                )
                erase(UnsafeMutableRawBufferPointer(schedule))
            }
        }
    }

    /// HMAC-SHA256 (RFC 2104) of `message` under `key`.
    package static func hmacSHA256(key: UnsafeRawBufferPointer, message: [UInt8]) -> [UInt8] {
        // A key longer than the block is hashed first; either way padded with zeros to 64 bytes.
        var block = key.count > 64 ? SHA256.hash(Array(key)) : Array(key)
        block += [UInt8](repeating: 0, count: 64 - block.count)
        defer { block.withUnsafeMutableBytes { erase($0) } }
        var inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(block.map { $0 ^ 0x5C })
        outer.update(inner.finalize())
        return outer.finalize()
    }

    /// Whether `a` and `b` are equal, in time that depends only on their lengths.
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// Overwrites `bytes` with zeros (`explicit_bzero`, which is never optimised away).
    static func erase(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        explicit_bzero(base, bytes.count)
    }
}

@inline(__always)
func rotr(_ value: UInt32, _ count: UInt32) -> UInt32 { (value >> count) | (value << (32 - count)) }

@inline(__always)
func rotl(_ value: UInt32, _ count: UInt32) -> UInt32 { (value << count) | (value >> (32 - count)) }
