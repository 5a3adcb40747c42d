// ID token verification (OAuth/IDTokenVerifier.swift) against a fixed JWK Set.
//
// Input: a first byte choosing the mode, then either a compact JWS as received (mode even), or
// a claims set that is signed here with the set's own ES256 key (mode odd), so the claim checks
// past the signature are reached too.
internal import Foundation
internal import FuzzSupport
internal import LatchkeyCrypto

@testable internal import LatchkeyOAuth
@testable internal import LatchkeySupport
@testable internal import LatchkeyVault

enum Fixed {
    static let signingKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x42, count: 32))
    static let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"fuzz-ec","typ":"JWT"}"#.utf8))
    static let keys: JSONWebKeySet = {
        let point = signingKey.publicKey.rawRepresentation
        let json = """
            {"keys": [
              {"kty": "EC", "kid": "fuzz-ec", "use": "sig", "crv": "P-256",
               "x": "\(Base64URL.encode(point.prefix(32)))", "y": "\(Base64URL.encode(point.suffix(32)))"},
              {"kty": "RSA", "kid": "fuzz-rsa", "alg": "RS256", "n": "\(Base64URL.encode([UInt8](repeating: 0xC3, count: 256)))",
               "e": "AQAB"}
            ]}
            """
        return try! JSONWebKeySet(json: Array(json.utf8))
    }()
    static let verifier = IDTokenVerifier(issuer: "https://idp.example.com/realms/main", clientID: "latchkey-fuzz-client")
    static let nonce = Secret("fuzz-nonce")
    /// 2024-01-01T00:00:00Z; seeds carry `exp` and `iat` around it.
    static let now = Date(timeIntervalSince1970: 1_704_067_200)
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard let mode = bytes.first else { return 0 }
    let body = bytes.dropFirst()
    let token: String
    if mode & 1 == 0 {
        token = String(decoding: body, as: UTF8.self)
    } else {
        let signingInput = Fixed.header + "." + Base64URL.encode(body)
        guard let signature = try? Fixed.signingKey.signature(for: Array(signingInput.utf8)) else { return 0 }
        token = signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
    for nonce in [Fixed.nonce, nil] {
        do {
            let claims = try Fixed.verifier.verify(Secret(token), keys: Fixed.keys, nonce: nonce, now: Fixed.now)
            precondition(claims.issuer == Fixed.verifier.issuer && !claims.subject.isEmpty, "a token for another issuer was accepted")
        } catch {
            _ = error.description
        }
    }
    return 0
}

runFuzzer(testOneInput)
