import LatchkeyCrypto
import Testing

/// SHA-1 and SHA-2 against FIPS 180's examples (NIST's "Examples with Intermediate Values"), and
/// HMAC against RFC 4231 (SHA-2) and RFC 2202 (SHA-1).
@Suite("Hashes (FIPS 180-4) and HMAC (RFC 4231, RFC 2202)")
struct HashAndMACTests {
    static let abc = Vectors.ascii("abc")
    static let twoBlocks = Vectors.ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
    static let twoBlocks1024 = Vectors.ascii(
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")

    @Test("SHA-1, SHA-256, SHA-384 and SHA-512 of FIPS 180's one-block and two-block messages")
    func fipsExamples() {
        #expect(Vectors.hex(Insecure.SHA1.hash(data: Self.abc)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Vectors.hex(Insecure.SHA1.hash(data: Self.twoBlocks)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(Vectors.hex(SHA256.hash(data: Self.abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Vectors.hex(SHA256.hash(data: Self.twoBlocks)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            Vectors.hex(SHA384.hash(data: Self.abc))
                == "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
        #expect(
            Vectors.hex(SHA384.hash(data: Self.twoBlocks1024))
                == "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039")
        #expect(
            Vectors.hex(SHA512.hash(data: Self.abc))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        #expect(
            Vectors.hex(SHA512.hash(data: Self.twoBlocks1024))
                == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        )
        #expect(Vectors.hex(SHA256.hash(data: [UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.byteCount == 32 && SHA384.byteCount == 48 && SHA512.byteCount == 64 && Insecure.SHA1.byteCount == 20)
    }

    @Test("SHA-256 of a million 'a's, fed in uneven pieces, is FIPS 180's")
    func incrementalMillion() {
        var hash = SHA256()
        var fed = 0
        for size in [1, 63, 64, 65, 1000, 4095].cycled(until: 1_000_000) {
            let piece = min(size, 1_000_000 - fed)
            hash.update(data: [UInt8](repeating: UInt8(ascii: "a"), count: piece))
            fed += piece
        }
        #expect(fed == 1_000_000)
        #expect(Vectors.hex(hash.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("an incremental hash is a value: a copy goes on alone, and finalize leaves it able to go on")
    func valueSemantics() {
        var first = SHA256()
        first.update(data: Vectors.ascii("ab"))
        var second = first
        second.update(data: Vectors.ascii("c"))
        #expect(second.finalize() == SHA256.hash(data: Self.abc))
        #expect(first.finalize() == SHA256.hash(data: Vectors.ascii("ab")), "the copy's update did not reach the original")
        first.update(data: Vectors.ascii("c"))
        #expect(first.finalize() == second.finalize())
        #expect(first.finalize() != SHA256.hash(data: Vectors.ascii("abd")))
    }

    @Test("HMAC-SHA-256, -384 and -512 of RFC 4231's test cases 1, 2 and 6, and HMAC-SHA-1 of RFC 2202's case 1")
    func rfc4231() {
        let key1 = SymmetricKey(data: [UInt8](repeating: 0x0B, count: 20))
        let hiThere = Vectors.ascii("Hi There")
        #expect(
            Vectors.hex(HMAC<SHA256>.authenticationCode(for: hiThere, using: key1))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            Vectors.hex(HMAC<SHA384>.authenticationCode(for: hiThere, using: key1))
                == "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6")
        #expect(
            Vectors.hex(HMAC<SHA512>.authenticationCode(for: hiThere, using: key1))
                == "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"
        )
        #expect(
            Vectors.hex(
                HMAC<SHA256>.authenticationCode(
                    for: Vectors.ascii("what do ya want for nothing?"), using: SymmetricKey(data: Vectors.ascii("Jefe"))))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            Vectors.hex(
                HMAC<SHA256>.authenticationCode(
                    for: Vectors.ascii("Test Using Larger Than Block-Size Key - Hash Key First"),
                    using: SymmetricKey(data: [UInt8](repeating: 0xAA, count: 131))))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(
            Vectors.hex(HMAC<Insecure.SHA1>.authenticationCode(for: hiThere, using: key1)) == "b617318655057264e28bc0b6fb378c8ef146be00")
        // An empty key and message (RFC 2104 allows any key length).
        #expect(
            Vectors.hex(HMAC<SHA256>.authenticationCode(for: [UInt8](), using: SymmetricKey(data: [UInt8]())))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test("isValidAuthenticationCode takes the right code only: not one changed, cut short or for other data")
    func validation() {
        let key = SymmetricKey(size: .bits256)
        let data = Vectors.ascii("latchkey vault key check")
        let code = Array(HMAC<SHA256>.authenticationCode(for: data, using: key))
        #expect(HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: data, using: key))
        #expect(
            HMAC<SHA256>.isValidAuthenticationCode(HMAC<SHA256>.authenticationCode(for: data, using: key), authenticating: data, using: key)
        )
        var changed = code
        changed[31] ^= 1
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(changed, authenticating: data, using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(Array(code.prefix(16)), authenticating: data, using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: data + [0], using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: data, using: SymmetricKey(size: .bits256)))
    }

    @Test("symmetric keys: their size, their bytes, random ones differ, equality by value")
    func symmetricKeys() {
        let key = SymmetricKey(size: .bits256)
        #expect(key.bitCount == 256 && key.withUnsafeBytes { $0.count } == 32)
        #expect(key != SymmetricKey(size: .bits256))
        #expect(key == SymmetricKey(data: key.withUnsafeBytes { Array($0) }))
        #expect(SymmetricKey(data: [1, 2, 3]).withUnsafeBytes { Array($0) } == [1, 2, 3])
        #expect(SymmetricKey(size: SymmetricKeySize(bitCount: 128)).bitCount == 128)
        #expect(CryptoLibrary.randomBytes(16) != CryptoLibrary.randomBytes(16))
    }
}

extension Array {
    /// The elements over and over, as many as it takes to add up to `total` (for sizes).
    fileprivate func cycled(until total: Int) -> [Element] where Element == Int {
        var result: [Int] = []
        var sum = 0
        while sum < total {
            for element in self where sum < total {
                result.append(element)
                sum += element
            }
        }
        return result
    }
}
