extension VaultCrypto {
    /// ChaCha20-Poly1305 (RFC 8439 §2.8): a 256-bit key, a 96-bit nonce, a 128-bit tag.
    package enum ChaCha20Poly1305 {
        package static let nonceByteCount = 12
        package static let tagByteCount = 16

        /// A tag that does not verify: another key or associated data, or a changed box.
        package struct AuthenticationFailure: Error, Equatable {}

        /// The ciphertext of `plaintext` followed by its tag (§2.8).
        package static func seal(_ plaintext: [UInt8], key: VaultKey, nonce: [UInt8], authenticating aad: [UInt8]) -> [UInt8] {
            precondition(nonce.count == nonceByteCount, "a ChaCha20-Poly1305 nonce is 12 bytes")
            var output = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
            key.withUnsafeBytes { key in
                output.withUnsafeMutableBytes { output in
                    plaintext.withUnsafeBytes { plaintext in
                        nonce.withUnsafeBytes { nonce in
                            let ciphertext = UnsafeMutableRawBufferPointer(rebasing: output[0..<plaintext.count])
                            xorKeyStream(key: key, nonce: nonce, from: plaintext, into: ciphertext)
                            let tag = self.tag(key: key, nonce: nonce, aad: aad, ciphertext: UnsafeRawBufferPointer(ciphertext))
                            UnsafeMutableRawBufferPointer(rebasing: output[plaintext.count...]).copyBytes(from: tag)
                        }
                    }
                }
            }
            return output
        }

        /// The plaintext of `sealed` (ciphertext then tag), if its tag verifies; the tag is checked
        /// before anything is decrypted.
        package static func open(
            _ sealed: [UInt8], key: VaultKey, nonce: [UInt8], authenticating aad: [UInt8]
        ) throws(AuthenticationFailure) -> [UInt8] {
            guard nonce.count == nonceByteCount, sealed.count >= tagByteCount else { throw AuthenticationFailure() }
            let count = sealed.count - tagByteCount
            let authentic = key.withUnsafeBytes { key in
                sealed.withUnsafeBytes { sealed in
                    nonce.withUnsafeBytes { nonce in
                        let expected = tag(
                            key: key, nonce: nonce, aad: aad, ciphertext: UnsafeRawBufferPointer(rebasing: sealed[0..<count]))
                        return constantTimeEqual(expected, Array(sealed[count...]))
                    }
                }
            }
            guard authentic else { throw AuthenticationFailure() }
            var plaintext = [UInt8](repeating: 0, count: count)
            key.withUnsafeBytes { key in
                sealed.withUnsafeBytes { sealed in
                    nonce.withUnsafeBytes { nonce in
                        plaintext.withUnsafeMutableBytes {
                            xorKeyStream(key: key, nonce: nonce, from: UnsafeRawBufferPointer(rebasing: sealed[0..<count]), into: $0)
                        }
                    }
                }
            }
            return plaintext
        }

        /// Poly1305 of the AEAD's MAC data (§2.8): aad, padding, ciphertext, padding, both lengths,
        /// under the one-time key from block 0 (§2.6).
        private static func tag(
            key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: [UInt8], ciphertext: UnsafeRawBufferPointer
        ) -> [UInt8] {
            var oneTimeKey = [UInt8](repeating: 0, count: 64)
            defer { oneTimeKey.withUnsafeMutableBytes { erase($0) } }
            oneTimeKey.withUnsafeMutableBytes { block(key: key, counter: 0, nonce: nonce, into: $0.baseAddress!) }
            var mac = Poly1305(key: Array(oneTimeKey[0..<32]))
            aad.withUnsafeBytes { mac.update($0, padded: true) }
            mac.update(ciphertext, padded: true)
            var lengths = [UInt8](repeating: 0, count: 16)
            for index in 0..<8 {
                lengths[index] = UInt8(truncatingIfNeeded: UInt64(aad.count) >> (UInt64(index) * 8))
                lengths[8 + index] = UInt8(truncatingIfNeeded: UInt64(ciphertext.count) >> (UInt64(index) * 8))
            }
            lengths.withUnsafeBytes { mac.update($0, padded: false) }
            return mac.finalize()
        }

        /// `input` XOR the ChaCha20 key stream from block counter 1 (§2.4, §2.8).
        private static func xorKeyStream(
            key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, from input: UnsafeRawBufferPointer,
            into output: UnsafeMutableRawBufferPointer
        ) {
            precondition(input.count == output.count && input.count / 64 < Int(UInt32.max), "ChaCha20 takes at most 256 GiB")
            withUnsafeTemporaryAllocation(byteCount: 64, alignment: 16) { stream in
                var offset = 0
                var counter: UInt32 = 1
                while offset < input.count {
                    block(key: key, counter: counter, nonce: nonce, into: stream.baseAddress!)
                    let count = min(64, input.count - offset)
                    for index in 0..<count {
                        output[offset + index] = input[offset + index] ^ stream.load(fromByteOffset: index, as: UInt8.self)
                    }
                    offset += count
                    counter &+= 1
                }
                erase(stream)
            }
        }

        /// The ChaCha20 block function (§2.3): 64 bytes of key stream for `counter`.
        static func block(key: UnsafeRawBufferPointer, counter: UInt32, nonce: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer)
        {
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 32) { words in
                let initial = words.baseAddress!
                let x = initial + 16
                // "expand 32-byte k", the key, the counter and the nonce, all little-endian.
                initial[0] = 0x6170_7865
                initial[1] = 0x3320_646e
                initial[2] = 0x7962_2d32
                initial[3] = 0x6b20_6574
                for index in 0..<8 {
                    initial[4 + index] = UInt32(littleEndian: key.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
                }
                initial[12] = counter
                for index in 0..<3 {
                    initial[13 + index] = UInt32(littleEndian: nonce.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
                }
                x.update(from: initial, count: 16)
                for _ in 0..<10 {
                    quarterRound(x, 0, 4, 8, 12)
                    quarterRound(x, 1, 5, 9, 13)
                    quarterRound(x, 2, 6, 10, 14)
                    quarterRound(x, 3, 7, 11, 15)
                    quarterRound(x, 0, 5, 10, 15)
                    quarterRound(x, 1, 6, 11, 12)
                    quarterRound(x, 2, 7, 8, 13)
                    quarterRound(x, 3, 4, 9, 14)
                }
                for index in 0..<16 {
                    output.storeBytes(of: (x[index] &+ initial[index]).littleEndian, toByteOffset: index * 4, as: UInt32.self)
                }
                erase(UnsafeMutableRawBufferPointer(words))
            }
        }

        @inline(__always)
        private static func quarterRound(_ x: UnsafeMutablePointer<UInt32>, _ a: Int, _ b: Int, _ c: Int, _ d: Int) {
            x[a] = x[a] &+ x[b]
            x[d] = rotl(x[d] ^ x[a], 16)
            x[c] = x[c] &+ x[d]
            x[b] = rotl(x[b] ^ x[c], 12)
            x[a] = x[a] &+ x[b]
            x[d] = rotl(x[d] ^ x[a], 8)
            x[c] = x[c] &+ x[d]
            x[b] = rotl(x[b] ^ x[c], 7)
        }
    }

    /// Poly1305 (RFC 8439 §2.5) in five 26-bit limbs, as poly1305-donna computes it: no branch or
    /// index depends on the key or the message.
    struct Poly1305 {
        private var r: (UInt64, UInt64, UInt64, UInt64, UInt64)
        private var h: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        private var s: (UInt32, UInt32, UInt32, UInt32)
        private static let mask: UInt64 = 0x3ff_ffff

        /// `key`: r (clamped, §2.5) then s, 16 bytes each.
        init(key: [UInt8]) {
            precondition(key.count == 32)
            func word(_ offset: Int) -> UInt64 {
                UInt64(key[offset]) | UInt64(key[offset + 1]) << 8 | UInt64(key[offset + 2]) << 16 | UInt64(key[offset + 3]) << 24
            }
            r = (
                word(0) & 0x3ff_ffff, (word(3) >> 2) & 0x3ff_ff03, (word(6) >> 4) & 0x3ff_c0ff, (word(9) >> 6) & 0x3f0_3fff,
                (word(12) >> 8) & 0x00f_ffff
            )
            s = (UInt32(word(16)), UInt32(word(20)), UInt32(word(24)), UInt32(word(28)))
        }

        /// Adds `bytes` in 16-byte blocks; a last shorter block is zero-padded to 16 (`padded`,
        /// the AEAD's pad16) or, for plain Poly1305, ended with a 1 byte.
        mutating func update(_ bytes: UnsafeRawBufferPointer, padded: Bool) {
            var offset = 0
            var block = [UInt8](repeating: 0, count: 17)
            while offset < bytes.count {
                let count = min(16, bytes.count - offset)
                for index in 0..<17 { block[index] = index < count ? bytes[offset + index] : 0 }
                // The 2^128 bit of a whole block (or one padded to 16); right after a short one.
                block[padded ? 16 : count] = 1
                absorb(block)
                offset += count
            }
            block.withUnsafeMutableBytes { VaultCrypto.erase($0) }
        }

        /// h = (h + block) · r mod 2^130 − 5, `block` being 17 little-endian bytes.
        private mutating func absorb(_ block: [UInt8]) {
            func word(_ offset: Int) -> UInt64 {
                UInt64(block[offset]) | UInt64(block[offset + 1]) << 8 | UInt64(block[offset + 2]) << 16 | UInt64(block[offset + 3]) << 24
            }
            let mask = Self.mask
            var h0 = h.0 + (word(0) & mask)
            var h1 = h.1 + ((word(3) >> 2) & mask)
            var h2 = h.2 + ((word(6) >> 4) & mask)
            var h3 = h.3 + ((word(9) >> 6) & mask)
            var h4 = h.4 + ((word(12) >> 8) | UInt64(block[16]) << 24)
            let (r0, r1, r2, r3, r4) = r
            let (s1, s2, s3, s4) = (r1 * 5, r2 * 5, r3 * 5, r4 * 5)
            let d0 = h0 * r0 + h1 * s4 + h2 * s3 + h3 * s2 + h4 * s1
            var d1 = h0 * r1 + h1 * r0 + h2 * s4 + h3 * s3 + h4 * s2
            var d2 = h0 * r2 + h1 * r1 + h2 * r0 + h3 * s4 + h4 * s3
            var d3 = h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * s4
            var d4 = h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0
            var carry = d0 >> 26
            h0 = d0 & mask
            d1 += carry
            carry = d1 >> 26
            h1 = d1 & mask
            d2 += carry
            carry = d2 >> 26
            h2 = d2 & mask
            d3 += carry
            carry = d3 >> 26
            h3 = d3 & mask
            d4 += carry
            carry = d4 >> 26
            h4 = d4 & mask
            h0 += carry * 5
            carry = h0 >> 26
            h0 &= mask
            h1 += carry
            h = (h0, h1, h2, h3, h4)
        }

        /// The tag: h fully reduced mod 2^130 − 5, plus s, mod 2^128 (§2.5.1).
        func finalize() -> [UInt8] {
            let mask = Self.mask
            var (h0, h1, h2, h3, h4) = h
            var carry = h1 >> 26
            h1 &= mask
            h2 += carry
            carry = h2 >> 26
            h2 &= mask
            h3 += carry
            carry = h3 >> 26
            h3 &= mask
            h4 += carry
            carry = h4 >> 26
            h4 &= mask
            h0 += carry * 5
            carry = h0 >> 26
            h0 &= mask
            h1 += carry
            // g = h − p = h + 5 − 2^130; keep g when it did not go below zero, else h, without a branch.
            var g0 = h0 + 5
            carry = g0 >> 26
            g0 &= mask
            var g1 = h1 + carry
            carry = g1 >> 26
            g1 &= mask
            var g2 = h2 + carry
            carry = g2 >> 26
            g2 &= mask
            var g3 = h3 + carry
            carry = g3 >> 26
            g3 &= mask
            let g4 = (h4 + carry) &- (1 << 26)
            let keepG = (g4 >> 63) &- 1  // all ones when g4 is not negative
            let keepH = ~keepG
            h0 = (h0 & keepH) | (g0 & keepG)
            h1 = (h1 & keepH) | (g1 & keepG)
            h2 = (h2 & keepH) | (g2 & keepG)
            h3 = (h3 & keepH) | (g3 & keepG)
            h4 = (h4 & keepH) | (g4 & keepG & mask)
            // h mod 2^128 in four 32-bit words, plus s.
            let words = [
                (h0 | h1 << 26) & 0xffff_ffff, (h1 >> 6 | h2 << 20) & 0xffff_ffff, (h2 >> 12 | h3 << 14) & 0xffff_ffff,
                (h3 >> 18 | h4 << 8) & 0xffff_ffff,
            ]
            var sum: UInt64 = 0
            var tag: [UInt8] = []
            for (index, pad) in [s.0, s.1, s.2, s.3].enumerated() {
                sum = words[index] + UInt64(pad) + (sum >> 32)
                tag += (0..<4).map { UInt8(truncatingIfNeeded: sum >> (UInt64($0) * 8)) }
            }
            return tag
        }
    }
}
