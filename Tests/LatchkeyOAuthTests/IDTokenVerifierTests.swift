import Foundation
import LatchkeyCrypto
import Testing

@testable import LatchkeyOAuth
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("ID token verification (OIDC Core §3.1.3.7)")
struct IDTokenVerifierTests {
    // MARK: - Keys and signing, done here rather than trusted to the code under test

    /// Generated once: RSA key generation is the slow part of this suite.
    static let rsaKey = try! RSA.Signing.PrivateKey(keySize: .bits2048)
    static let ecKey = P256.Signing.PrivateKey()
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static let issuer = "https://idp.example.com"
    static let clientID = "client-example"
    static let nonce = "n-0S6_WzA2Mj"

    static let keySetJSON: [UInt8] = {
        let rsa = try! rsaKey.publicKey.getKeyPrimitives()
        let ec = ecKey.publicKey.rawRepresentation
        let document: [String: Any] = [
            "keys": [
                [
                    "kty": "RSA", "kid": "rsa-1", "use": "sig", "alg": "RS256", "n": Base64URL.encode(rsa.modulus),
                    "e": Base64URL.encode(rsa.publicExponent),
                ],
                [
                    "kty": "EC", "kid": "ec-1", "use": "sig", "crv": "P-256", "x": Base64URL.encode(ec.prefix(32)),
                    "y": Base64URL.encode(ec.suffix(32)),
                ],
                ["kty": "oct", "kid": "symmetric", "k": "c2VjcmV0"],
            ]
        ]
        return Array(try! JSONSerialization.data(withJSONObject: document))
    }()

    enum Signer {
        case rsa
        case ec(P256.Signing.PrivateKey)
        case hmac(key: [UInt8])
        case unsigned
    }

    static func base64URLJSON(_ object: [String: Any]) -> String {
        Base64URL.encode(try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys))
    }

    static func defaultClaims() -> [String: Any] {
        [
            "iss": issuer, "sub": "248289761001", "aud": clientID, "exp": now.timeIntervalSince1970 + 600,
            "iat": now.timeIntervalSince1970 - 5, "nonce": nonce, "email": "alice@example.com", "name": "Alice",
        ]
    }

    static func token(header: [String: Any], claims: [String: Any] = defaultClaims(), signer: Signer) throws -> Secret {
        let signingInput = base64URLJSON(header) + "." + base64URLJSON(claims)
        let input = Array(signingInput.utf8)
        let signature: [UInt8]
        switch signer {
        case .rsa:
            signature = Array(try rsaKey.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation)
        case .ec(let key):
            signature = Array(try key.signature(for: input).rawRepresentation)
        case .hmac(let key):
            signature = Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: key)))
        case .unsigned:
            signature = []
        }
        return Secret(signingInput + "." + Base64URL.encode(signature))
    }

    static func rs256(_ claims: [String: Any] = defaultClaims()) throws -> Secret {
        try token(header: ["alg": "RS256", "kid": "rsa-1", "typ": "JWT"], claims: claims, signer: .rsa)
    }

    static func es256(_ claims: [String: Any] = defaultClaims()) throws -> Secret {
        try token(header: ["alg": "ES256", "kid": "ec-1"], claims: claims, signer: .ec(ecKey))
    }

    static func claims(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
        var claims = defaultClaims()
        change(&claims)
        return claims
    }

    func verify(_ token: Secret, nonce: String? = IDTokenVerifierTests.nonce) throws(IDTokenError) -> IDTokenClaims {
        let keys = try JSONWebKeySet(json: Self.keySetJSON)
        return try IDTokenVerifier(issuer: Self.issuer, clientID: Self.clientID).verify(
            token, keys: keys, nonce: nonce.map(Secret.init), now: Self.now)
    }

    /// The name of the claim a token was refused for, `nil` when it was accepted or refused for another reason.
    func refusedClaim(_ token: Secret, nonce: String? = IDTokenVerifierTests.nonce) -> String? {
        do {
            _ = try verify(token, nonce: nonce)
            return nil
        } catch {
            if case .claim(let name, _) = error { return name }
            return nil
        }
    }

    // MARK: - at_hash

    /// OpenID Connect Core 1.0, Appendix A.3: this access token and its RS256 `at_hash`.
    static let exampleAccessToken = Secret("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y")
    static let exampleAccessTokenHash = "77QmUPtjPfzWtF2AnpK9RQ"

    func verify(_ token: Secret, accessToken: Secret) throws(IDTokenError) -> IDTokenClaims {
        try IDTokenVerifier(issuer: Self.issuer, clientID: Self.clientID).verify(
            token, keys: try JSONWebKeySet(json: Self.keySetJSON), nonce: Secret(Self.nonce), accessToken: accessToken, now: Self.now)
    }

    @Test("an at_hash is checked against the access token issued with it: OIDC Core's example passes, another token is refused")
    func accessTokenHash() throws {
        let token = try Self.rs256(Self.claims { $0["at_hash"] = Self.exampleAccessTokenHash })
        #expect(try verify(token, accessToken: Self.exampleAccessToken).subject == "248289761001")
        #expect(throws: IDTokenError.claim("at_hash", "does not match the access token issued with it")) {
            try verify(token, accessToken: Secret("another-access-token"))
        }
    }

    @Test("at_hash follows the signing algorithm's hash: ES256 hashes with SHA-256, and a wrong hash is refused there too")
    func accessTokenHashES256() throws {
        let good = try Self.es256(Self.claims { $0["at_hash"] = Self.exampleAccessTokenHash })
        #expect(try verify(good, accessToken: Self.exampleAccessToken).subject == "248289761001")
        let bad = try Self.es256(Self.claims { $0["at_hash"] = "AAAAAAAAAAAAAAAAAAAAAA" })
        #expect(throws: IDTokenError.self) { try verify(bad, accessToken: Self.exampleAccessToken) }
    }

    @Test("a token without at_hash is accepted with any access token (the claim is optional in the code flow)")
    func noAccessTokenHash() throws {
        #expect(try verify(try Self.rs256(), accessToken: Secret("anything")).subject == "248289761001")
    }

    // MARK: - Accepted

    @Test("an RS256 token signed by a key in the JWKS is accepted and its claims returned")
    func rs256Accepted() throws {
        let claims = try verify(try Self.rs256())
        #expect(claims.issuer == Self.issuer)
        #expect(claims.subject == "248289761001")
        #expect(claims.email == "alice@example.com")
        #expect(claims.name == "Alice")
        #expect(claims.expiresAt == Self.now.addingTimeInterval(600))
    }

    @Test("an ES256 token (raw r||s signature) is accepted")
    func es256Accepted() throws {
        #expect(try verify(try Self.es256()).subject == "248289761001")
    }

    @Test("a token without kid is checked against every key of its type")
    func noKeyID() throws {
        let token = try Self.token(header: ["alg": "ES256"], signer: .ec(Self.ecKey))
        #expect(try verify(token).subject == "248289761001")
    }

    @Test("several audiences are accepted when azp names this client")
    func severalAudiencesWithAuthorizedParty() throws {
        let token = try Self.rs256(
            Self.claims {
                $0["aud"] = [Self.clientID, "https://api.example.com"]; $0["azp"] = Self.clientID
            })
        #expect(try verify(token).subject == "248289761001")
    }

    @Test("exp and iat within the allowed clock skew are accepted")
    func withinSkew() throws {
        let token = try Self.rs256(
            Self.claims {
                $0["exp"] = Self.now.timeIntervalSince1970 - 60
                $0["iat"] = Self.now.timeIntervalSince1970 + 60
            })
        #expect(try verify(token).subject == "248289761001")
    }

    @Test("no nonce is checked when the request sent none")
    func noNonceRequested() throws {
        let token = try Self.rs256(Self.claims { $0["nonce"] = nil })
        #expect(try verify(token, nonce: nil).subject == "248289761001")
    }

    // MARK: - Refused algorithms and keys

    @Test("alg none is refused")
    func algorithmNone() throws {
        let token = try Self.token(header: ["alg": "none"], signer: .unsigned)
        #expect(throws: IDTokenError.refusedAlgorithm("none")) { try verify(token) }
    }

    @Test("HS256 is refused, even keyed with the provider's public key")
    func algorithmHMAC() throws {
        let publicKeyBytes = Array(Self.rsaKey.publicKey.derRepresentation)
        let token = try Self.token(header: ["alg": "HS256", "kid": "rsa-1"], signer: .hmac(key: publicKeyBytes))
        #expect(throws: IDTokenError.refusedAlgorithm("HS256")) { try verify(token) }
        let symmetric = try Self.token(header: ["alg": "HS256", "kid": "symmetric"], signer: .hmac(key: Array("secret".utf8)))
        #expect(throws: IDTokenError.refusedAlgorithm("HS256")) { try verify(symmetric) }
    }

    @Test("a token whose payload was changed after signing has a bad signature")
    func tamperedPayload() throws {
        let genuine = try Self.rs256().exposedValue.split(separator: ".")
        let forgedPayload = Self.base64URLJSON(Self.claims { $0["sub"] = "mallory" })
        let forged = Secret([genuine[0], Substring(forgedPayload), genuine[2]].joined(separator: "."))
        #expect(throws: IDTokenError.badSignature) { try verify(forged) }
    }

    @Test("an ES256 token signed by a key that is not in the JWKS has a bad signature")
    func foreignKey() throws {
        let token = try Self.token(header: ["alg": "ES256", "kid": "ec-1"], signer: .ec(P256.Signing.PrivateKey()))
        #expect(throws: IDTokenError.badSignature) { try verify(token) }
    }

    @Test("a kid that is not in the JWKS is an unknown key")
    func unknownKeyID() throws {
        let token = try Self.token(header: ["alg": "RS256", "kid": "rotated-away"], signer: .rsa)
        #expect(throws: IDTokenError.unknownKey(keyID: "rotated-away")) { try verify(token) }
    }

    @Test("an alg that does not fit the key named by kid finds no key")
    func algorithmKeyTypeMismatch() throws {
        let token = try Self.token(header: ["alg": "ES256", "kid": "rsa-1"], signer: .ec(Self.ecKey))
        #expect(throws: IDTokenError.unknownKey(keyID: "rsa-1")) { try verify(token) }
    }

    @Test("a token that is not three base64url parts is malformed", arguments: ["", "a.b", "a.b.c.d", "!!.??.**"])
    func malformed(text: String) {
        #expect {
            try verify(Secret(text))
        } throws: { error in
            guard case .malformed = error as? IDTokenError else { return false }
            return true
        }
    }

    @Test("a header with critical extensions is refused")
    func criticalHeader() throws {
        let token = try Self.token(header: ["alg": "RS256", "kid": "rsa-1", "crit": ["exp"], "exp": 1], signer: .rsa)
        #expect {
            try verify(token)
        } throws: { error in
            guard case .malformed = error as? IDTokenError else { return false }
            return true
        }
    }

    // MARK: - Refused claims

    @Test("a token from another issuer is refused")
    func wrongIssuer() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["iss"] = "https://evil.example.com" })) == "iss")
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["iss"] = Self.issuer + "/" })) == "iss")
    }

    @Test("a token without sub is refused")
    func missingSubject() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["sub"] = nil })) == "sub")
    }

    @Test("a token whose aud does not contain this client is refused")
    func audienceWithoutClient() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["aud"] = "another-client" })) == "aud")
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["aud"] = ["another-client", "third"] })) == "aud")
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["aud"] = nil })) == "aud")
    }

    @Test("several audiences without azp are refused")
    func severalAudiencesWithoutAuthorizedParty() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["aud"] = [Self.clientID, "https://api.example.com"] })) == "azp")
    }

    @Test("an azp naming another client is refused")
    func authorizedPartyMismatch() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["azp"] = "another-client" })) == "azp")
    }

    @Test("a token expired beyond the allowed skew is refused")
    func expired() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["exp"] = Self.now.timeIntervalSince1970 - 121 })) == "exp")
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["exp"] = nil })) == "exp")
    }

    @Test("a token issued in the future beyond the allowed skew is refused")
    func issuedInFuture() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["iat"] = Self.now.timeIntervalSince1970 + 300 })) == "iat")
    }

    @Test("a token whose nonce differs from the request's, or has none, is refused")
    func nonceMismatch() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["nonce"] = "another-nonce" })) == "nonce")
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["nonce"] = nil })) == "nonce")
    }

    @Test("exp or iat given as a JSON boolean is refused as missing", arguments: ["exp", "iat"])
    func booleanTimes(claim: String) throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0[claim] = true })) == claim)
    }

    @Test("exp or iat given as a string is refused as missing", arguments: ["exp", "iat"])
    func stringTimes(claim: String) throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0[claim] = "1750000600" })) == claim)
    }

    @Test("required claims of another type count as missing", arguments: ["iss", "sub", "aud", "nonce"])
    func requiredClaimOfAnotherType(claim: String) throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0[claim] = 42 })) == claim)
    }

    @Test("an aud array holding a non-string is refused")
    func mixedAudience() throws {
        #expect(refusedClaim(try Self.rs256(Self.claims { $0["aud"] = [Self.clientID, 7] as [Any] })) == "aud")
    }

    @Test("display claims of another type are ignored, not fatal")
    func displayClaimsOfAnotherType() throws {
        let claims = try verify(
            try Self.rs256(
                Self.claims {
                    $0["email"] = ["alice@example.com"]; $0["name"] = 7; $0["preferred_username"] = true
                }))
        #expect(claims.subject == "248289761001")
        #expect(claims.email == nil && claims.name == nil && claims.preferredUsername == nil)
    }

    @Test("a fractional exp is kept to the fraction")
    func fractionalExpiry() throws {
        let claims = try verify(try Self.rs256(Self.claims { $0["exp"] = Self.now.timeIntervalSince1970 + 600.5 }))
        #expect(claims.expiresAt == Self.now.addingTimeInterval(600.5))
    }

    @Test("firebase.sign_in_second_factor is read from the verified claims; other tokens have none")
    func firebaseSecondFactor() throws {
        let firebase = try verify(
            try Self.rs256(Self.claims { $0["firebase"] = ["sign_in_provider": "password", "sign_in_second_factor": "phone"] }))
        #expect(firebase.firebaseSecondFactor == "phone")
        #expect(try verify(try Self.rs256()).firebaseSecondFactor == nil)
        let odd = try verify(try Self.rs256(Self.claims { $0["firebase"] = "phone" }))
        #expect(odd.firebaseSecondFactor == nil)
    }

    @Test("a header with crit set to null is still refused")
    func criticalHeaderNull() throws {
        let token = try Self.token(header: ["alg": "RS256", "kid": "rsa-1", "crit": NSNull()], signer: .rsa)
        #expect(throws: IDTokenError.malformed("the header has critical extensions Latchkey does not understand")) { try verify(token) }
    }

    @Test("an alg that is not a string is no alg")
    func algorithmNotAString() throws {
        let token = try Self.token(header: ["alg": 256, "kid": "rsa-1"], signer: .rsa)
        #expect(throws: IDTokenError.malformed("the header has no alg")) { try verify(token) }
    }

    @Test("a payload that is not a JSON object is malformed, after the signature checks out")
    func payloadNotAnObject() throws {
        let header = Self.base64URLJSON(["alg": "ES256", "kid": "ec-1"])
        let payload = Base64URL.encode(Array("[1,2]".utf8))
        let input = Array((header + "." + payload).utf8)
        let signature = Array(try Self.ecKey.signature(for: input).rawRepresentation)
        let token = Secret(header + "." + payload + "." + Base64URL.encode(signature))
        #expect(throws: IDTokenError.malformed("the claims are not a JSON object")) { try verify(token) }
    }

    // MARK: - Key sets

    @Test("a JWKS without a keys array is unreadable")
    func unreadableKeySet() {
        #expect(throws: IDTokenError.self) { try JSONWebKeySet(json: Array("{\"kty\":\"RSA\"}".utf8)) }
        #expect(throws: IDTokenError.self) { try JSONWebKeySet(json: Array("<html>".utf8)) }
    }

    @Test("keys of unknown types, without kty or with parameters of odd types are skipped, not fatal")
    func oddKeysSkipped() throws {
        let document = #"""
            {"keys":[{"kty":"oct","k":"c2VjcmV0"},{"kid":"no-type"},{"kty":"RSA","kid":"odd","n":5,"e":true},{"kty":"OKP","crv":"Ed25519","x":"AA"}]}
            """#
        let keys = try JSONWebKeySet(json: Array(document.utf8))
        #expect(keys.keys.map(\.keyType) == ["oct", "RSA", "OKP"])
        #expect(keys.keys[1].keyID == "odd")
        #expect(!keys.keys[1].verify([], over: [], algorithm: .rs256))
    }

    @Test("a keys array holding something other than objects is unreadable")
    func keysNotObjects() {
        #expect(throws: IDTokenError.unreadableKeySet("not a JSON object with a \"keys\" array")) {
            try JSONWebKeySet(json: Array(#"{"keys":[{"kty":"RSA"},"junk"]}"#.utf8))
        }
    }

    @Test("keys marked for encryption are not used to verify signatures")
    func encryptionKeyIgnored() throws {
        let ec = Self.ecKey.publicKey.rawRepresentation
        let json = try JSONSerialization.data(withJSONObject: [
            "keys": [
                [
                    "kty": "EC", "kid": "ec-1", "use": "enc", "crv": "P-256", "x": Base64URL.encode(ec.prefix(32)),
                    "y": Base64URL.encode(ec.suffix(32)),
                ]
            ]
        ])
        let keys = try JSONWebKeySet(json: Array(json))
        #expect(throws: IDTokenError.unknownKey(keyID: "ec-1")) {
            try IDTokenVerifier(issuer: Self.issuer, clientID: Self.clientID).verify(
                try Self.es256(), keys: keys, nonce: nil, now: Self.now)
        }
    }
}
