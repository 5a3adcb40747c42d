import Foundation
import LatchkeyCrypto
import Testing

/// ECDSA and RSA signatures: RFC 7515's ES256 (Appendix A.3) and RS256 (Appendix A.2) examples,
/// vectors made by another implementation (Python's `cryptography`, on OpenSSL) for ES384, RS384
/// and RS512, and a sign/verify round trip for each kind of key.
@Suite("Signatures: ES256, ES384, RS256, RS384, RS512 (RFC 7515, RFC 7518)")
struct SignatureTests {
    // MARK: - RFC 7515 Appendix A.3 (ES256)

    static let es256Input = Vectors.ascii(
        "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ")
    static let es256X = Vectors.base64URL("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU")
    static let es256Y = Vectors.base64URL("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
    static let es256D = Vectors.base64URL("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI")
    static let es256Signature = Vectors.base64URL(
        "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q")

    @Test("RFC 7515 A.3's ES256 signature verifies under its key, and not over other input")
    func rfc7515ES256() throws {
        let key = try P256.Signing.PublicKey(rawRepresentation: Self.es256X + Self.es256Y)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Self.es256Signature)
        #expect(key.isValidSignature(signature, for: Self.es256Input))
        #expect(key.isValidSignature(signature, for: SHA256.hash(data: Self.es256Input)))
        #expect(!key.isValidSignature(signature, for: Self.es256Input + [0x2E]))
        var changed = Self.es256Signature
        changed[40] ^= 1
        #expect(!key.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: changed), for: Self.es256Input))
    }

    @Test("RFC 7515 A.3's private key (d) has its public key, signs what verifies, and writes back its d")
    func rfc7515ES256PrivateKey() throws {
        let key = try P256.Signing.PrivateKey(rawRepresentation: Self.es256D)
        #expect(Array(key.publicKey.rawRepresentation) == Self.es256X + Self.es256Y)
        #expect(Array(key.rawRepresentation) == Self.es256D)
        let signature = try key.signature(for: Self.es256Input)
        #expect(signature.rawRepresentation.count == 64)
        #expect(try P256.Signing.PublicKey(rawRepresentation: Self.es256X + Self.es256Y).isValidSignature(signature, for: Self.es256Input))
        #expect(try key.signature(for: Self.es256Input).rawRepresentation != signature.rawRepresentation, "a random nonce per signature")
    }

    @Test("an ES256 signature's DER form (RFC 3279) round-trips to r ‖ s")
    func derSignature() throws {
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Self.es256Signature)
        let der = signature.derRepresentation
        #expect(der.first == 0x30)
        #expect(Array(try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation) == Self.es256Signature)
        #expect(throws: CryptoError.self) { try P256.Signing.ECDSASignature(derRepresentation: der + [0]) }
        #expect(throws: CryptoError.self) { try P256.Signing.ECDSASignature(derRepresentation: [0x30, 0x00]) }
    }

    @Test("P-256 keys and signatures of the wrong size or off the curve are refused")
    func p256Refusals() throws {
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(rawRepresentation: Self.es256X + Self.es256Y.dropLast()) }
        var offCurve = Self.es256Y
        offCurve[31] ^= 1
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(rawRepresentation: Self.es256X + offCurve) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 64)) }
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0xFF, count: 32)) }
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(rawRepresentation: Self.es256D.dropLast()) }
        #expect(throws: CryptoError.self) { try P256.Signing.ECDSASignature(rawRepresentation: Self.es256Signature.dropLast()) }
        let zero = try P256.Signing.ECDSASignature(rawRepresentation: [UInt8](repeating: 0, count: 64))
        #expect(!(try P256.Signing.PublicKey(rawRepresentation: Self.es256X + Self.es256Y)).isValidSignature(zero, for: Self.es256Input))
    }

    @Test("P-256 round trip: a new key signs, its public key verifies, another key does not")
    func p256RoundTrip() throws {
        let key = P256.Signing.PrivateKey()
        let message = Vectors.ascii("a DPoP proof's signing input")
        let signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(
            try P256.Signing.PublicKey(rawRepresentation: key.publicKey.rawRepresentation).isValidSignature(signature, for: Data(message)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: message))
        #expect(
            try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation).publicKey.rawRepresentation
                == key.publicKey.rawRepresentation)
    }

    // MARK: - PEM

    /// A SEC 1 key and the same key's scalar (made by Python's `cryptography`).
    static let sec1PEM = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIGkHKtYpP0Mw4KZGVqO3z/xALsMRjTh8DJeulenvxbcToAoGCCqGSM49
        AwEHoUQDQgAEHszLqBITrZDK5p1QVRbtgtu80daXlIcqWD27yuJ3M/Ix+9aCNyvK
        pzo/x1LS3MBfZyKB/buvQwl2ockFEuxJwg==
        -----END EC PRIVATE KEY-----
        """
    static let sec1Scalar = "69072ad6293f4330e0a64656a3b7cffc402ec3118d387c0c97ae95e9efc5b713"
    /// A P-256 key in encrypted PKCS #8 (passphrase "secret"): refused, never asked about.
    static let encryptedPEM = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIH0MF8GCSqGSIb3DQEFDTBSMDEGCSqGSIb3DQEFDDAkBBDWTjaACbXFg+BmnGIW
        IrdpAgIIADAMBggqhkiG9w0CCQUAMB0GCWCGSAFlAwQBKgQQ/eJmrGPjSkE1tDWe
        oFmD/QSBkEkI82sMX830XKUMHlYXTvTvq/8La0y/FRa3iT0ro5dE5DY2ZQKNafnq
        DqM7h0fwuz6qH2+tD91f40tRreOCpCgirjpyZNfxV6BsT085kZMJp+J1NfVd+jh4
        q02aLYlFKBu5c+Cv+1Eirid2ozfm93Rsap3cdKpYz46H9mhR4GHHcbCCsozOPV31
        ylwnDBOdKQ==
        -----END ENCRYPTED PRIVATE KEY-----
        """

    @Test("P-256 PEM: SEC 1 reads, PKCS #8 writes and reads back; encrypted, RSA and junk are refused")
    func p256PEM() throws {
        let key = try P256.Signing.PrivateKey(pemRepresentation: Self.sec1PEM)
        #expect(Vectors.hex(key.rawRepresentation) == Self.sec1Scalar)
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(try P256.Signing.PrivateKey(pemRepresentation: pem).rawRepresentation == key.rawRepresentation)
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(pemRepresentation: Self.encryptedPEM) }
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(pemRepresentation: "not a key") }
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(pemRepresentation: "") }
        #expect(throws: CryptoError.self) { try RSA.Signing.PrivateKey(unsafePEMRepresentation: pem) }
    }

    // MARK: - ES384

    static let es384Input = Vectors.ascii("eyJhbGciOiJFUzM4NCJ9.eyJpc3MiOiJqb2UifQ")
    static let es384Point =
        Vectors.base64URL("oj0rsOJVfS2B1UPf2tvy6b_Nr26JIsJ3VXZXt4T2G35NsyHZ01g12U4k_oq186SQ")
        + Vectors.base64URL("97FCmzq1fnDnFfLuIF_fUkEMzBpd4unSuWTNHLZGkH5hrJnykpgIwpBWIWj3xCUO")
    static let es384Signature = Vectors.base64URL(
        "B3klcwsMxspWt58XH9KTA8EI58lWtG_rvWLKLnr-K9HFsvrUslTsAJmFpvwIVcrNkweM3v9FRxJf4oJ0vhdPONK2A3z1o_996iKKiujMVQdUgZzQgC05corrk6sfNoLZ")

    @Test("an ES384 signature made by another implementation verifies; a P-384 key signs what its public key verifies")
    func es384() throws {
        let key = try P384.Signing.PublicKey(rawRepresentation: Self.es384Point)
        let signature = try P384.Signing.ECDSASignature(rawRepresentation: Self.es384Signature)
        #expect(key.isValidSignature(signature, for: SHA384.hash(data: Self.es384Input)))
        #expect(!key.isValidSignature(signature, for: SHA384.hash(data: Self.es384Input + [0])))
        #expect(throws: CryptoError.self) { try P384.Signing.ECDSASignature(rawRepresentation: Self.es256Signature) }
        #expect(throws: CryptoError.self) { try P384.Signing.PublicKey(rawRepresentation: Self.es256X + Self.es256Y) }
        let own = P384.Signing.PrivateKey()
        let ownSignature = try own.signature(for: Self.es384Input)
        #expect(ownSignature.rawRepresentation.count == 96 && own.rawRepresentation.count == 48)
        #expect(
            try P384.Signing.PublicKey(rawRepresentation: own.publicKey.rawRepresentation).isValidSignature(
                ownSignature, for: Self.es384Input))
        #expect(!key.isValidSignature(ownSignature, for: SHA384.hash(data: Self.es384Input)))
    }

    // MARK: - RFC 7515 Appendix A.2 (RS256)

    static let rs256Input = Vectors.ascii(
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ")
    static let rs256Modulus = Vectors.base64URL(
        "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    )
    static let rs256Signature = Vectors.base64URL(
        "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
    )

    @Test("RFC 7515 A.2's RS256 signature verifies under (n, e); changed, cut short or over SHA-384 it does not")
    func rfc7515RS256() throws {
        let key = try RSA.Signing.PublicKey(n: Self.rs256Modulus, e: [0x01, 0x00, 0x01])
        #expect(key.keySizeInBits == 2048)
        let signature = RSA.Signing.RSASignature(rawRepresentation: Self.rs256Signature)
        #expect(key.isValidSignature(signature, for: SHA256.hash(data: Self.rs256Input), padding: .insecurePKCS1v1_5))
        #expect(!key.isValidSignature(signature, for: SHA256.hash(data: Self.rs256Input + [0]), padding: .insecurePKCS1v1_5))
        #expect(!key.isValidSignature(signature, for: SHA384.hash(data: Self.rs256Input), padding: .insecurePKCS1v1_5))
        var changed = Self.rs256Signature
        changed[100] ^= 1
        #expect(
            !key.isValidSignature(.init(rawRepresentation: changed), for: SHA256.hash(data: Self.rs256Input), padding: .insecurePKCS1v1_5))
        #expect(
            !key.isValidSignature(
                .init(rawRepresentation: Self.rs256Signature.dropLast()), for: SHA256.hash(data: Self.rs256Input),
                padding: .insecurePKCS1v1_5))
        let primitives = try key.getKeyPrimitives()
        #expect(Array(primitives.modulus) == Self.rs256Modulus && Array(primitives.publicExponent) == [1, 0, 1])
    }

    static let rsaModulus = Vectors.base64URL(
        "kxA0MDRwq-f-BqpoNmeZ1Qmo8x_WYBFhdS_g6xstF6azwTBvCNMEL_KPpjNRGhdBcPsTDmXljB26NuWT-OZDhtbXuVsDnmxaP-WeBpJR3-YRqZiluQGY5bnoJLoWHkS2IBMqS4rrw8zJ-42NtcHjyUYtYfOMLBHiElTH-RAQQlCK7uvp6IotimkZZlAQ4d4mXbhXKyjwvI9UfDVIzDXUNxkeHdXEx_dZwDCnEBVVKs_0G2W3JopXC-q_zAG4r3UqDN9zZgWa9o0Gciumb3UYjSLJUVR38fKa9807qenyTP6eRdAkXB_3ryuWQ1zR7KzNSBxOyKSsjNOJxbk-F_jz1Q"
    )

    @Test("RS384 and RS512 signatures made by another implementation verify, each under its own hash only")
    func rs384AndRS512() throws {
        let key = try RSA.Signing.PublicKey(n: Self.rsaModulus, e: [0x01, 0x00, 0x01])
        let rs384Input = Vectors.ascii("eyJhbGciOiJSUzM4NCJ9.eyJpc3MiOiJqb2UifQ")
        let rs512Input = Vectors.ascii("eyJhbGciOiJSUzUxMiJ9.eyJpc3MiOiJqb2UifQ")
        let rs384 = RSA.Signing.RSASignature(
            rawRepresentation: Vectors.base64URL(
                "CbzIioP3SlNl8OknDKCyLZLN9kTfJYqxIOlfS44V2L1siRmxjFSvVB0QSWxfGF9dvwT2tJSY5duIKCesd1ai9QoNw48NIDF_jxLJYqeT0JevshkqVkPoBxBW9ktj8U1Qk0UlSVKq_1G67XW3wxKPXfBzjdHCZ2sgs-vxlKk_FJtNb8kZx6wjPdH8NzFQd-zUMIB3cRNEfhzkn-zk6HmpREnjHTef8c__W8qeaXmAVb-yygsfri0YK9jyfe1w_aUrF7CCZqgYh19szW0LHksRLQtoqWTqzPmjcc13r-yNxLGGvn2YfoQkHs0w9biEtl_fFEPAfTDhaiePxZMz-hPzXw"
            ))
        let rs512 = RSA.Signing.RSASignature(
            rawRepresentation: Vectors.base64URL(
                "BsGkMcU89-LtdU3YyOOKN8nGPvFlp7MlRodtmU2jTKQs_k5uQ4DFsBVGZvCZoiPmmIV48ZYi1VljYeq5uAWQCeY8C7R5a3w8ndw6REeaoaPCDcrAG4BjaVHB99SaJ-dRHZXXz__25PSH5d1XyjSBPkbSonc5X-ZrAFmkZI5SwNWhRr7MZ6P_mDoebR-jRGV6J22t3TbD4DHBrY35MkE83CoqenapK2uZa2Cz5oaLKJRqayRlya_9RfPeweiwQbgiMJEOuOtRXyP-cn2fKhLU2Q4pL4eeqwFxqlM2HIH3Lk7M_hVmg-DXXP_jM4G3_bn5rF7kxJ-x-FqKoOep_8bXMw"
            ))
        #expect(key.isValidSignature(rs384, for: SHA384.hash(data: rs384Input), padding: .insecurePKCS1v1_5))
        #expect(key.isValidSignature(rs512, for: SHA512.hash(data: rs512Input), padding: .insecurePKCS1v1_5))
        #expect(!key.isValidSignature(rs384, for: SHA512.hash(data: rs384Input), padding: .insecurePKCS1v1_5))
        #expect(!key.isValidSignature(rs512, for: SHA384.hash(data: rs512Input), padding: .insecurePKCS1v1_5))
    }

    @Test("RSA public keys under 2048 bits, or with an even or too small exponent, are refused")
    func rsaRefusals() {
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(n: Self.rs256Modulus.dropFirst(), e: [0x01, 0x00, 0x01]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(n: Self.rs256Modulus, e: [0x01, 0x00, 0x00]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(n: Self.rs256Modulus, e: [0x01]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(n: Self.rs256Modulus.dropLast() + [0x00], e: [0x01, 0x00, 0x01]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(n: [UInt8](), e: [0x01, 0x00, 0x01]) }
    }

    @Test("RSA round trip: a new 2048-bit key signs RS256 that its (n, e) verify, and its PEM reads back")
    func rsaRoundTrip() throws {
        let key = try RSA.Signing.PrivateKey(keySize: .bits2048)
        #expect(key.keySizeInBits == 2048)
        let digest = SHA256.hash(data: Self.rs256Input)
        let signature = try key.signature(for: digest, padding: .insecurePKCS1v1_5)
        #expect(signature.rawRepresentation.count == 256)
        #expect(key.publicKey.isValidSignature(signature, for: digest, padding: .insecurePKCS1v1_5))
        let primitives = try key.publicKey.getKeyPrimitives()
        #expect(Array(primitives.publicExponent) == [1, 0, 1] && primitives.modulus.count == 256)
        let rebuilt = try RSA.Signing.PublicKey(n: primitives.modulus, e: primitives.publicExponent)
        #expect(rebuilt.isValidSignature(signature, for: digest, padding: .insecurePKCS1v1_5))
        #expect(rebuilt.derRepresentation == key.publicKey.derRepresentation && rebuilt.derRepresentation.first == 0x30)
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reread = try RSA.Signing.PrivateKey(pemRepresentation: pem)
        #expect(
            reread.publicKey.isValidSignature(
                try reread.signature(for: digest, padding: .insecurePKCS1v1_5), for: digest, padding: .insecurePKCS1v1_5))
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(pemRepresentation: pem) }
        // PKCS #1 v1.5 is deterministic: the same key signs the same digest alike.
        #expect(try reread.signature(for: digest, padding: .insecurePKCS1v1_5).rawRepresentation == signature.rawRepresentation)
    }
}
