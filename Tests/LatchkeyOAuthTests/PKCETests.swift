import Testing

@testable import LatchkeyOAuth
@testable import LatchkeyVault

@Suite("PKCE (RFC 7636)")
struct PKCETests {
    @Test("the S256 challenge of the RFC 7636 Appendix B verifier is the published one")
    func appendixBVector() {
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(PKCE.method == "S256")
    }

    @Test("a fresh verifier is 43 base64url characters (32 random bytes) and differs each time")
    func freshVerifiers() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let verifiers = (0..<16).map { _ in PKCE().verifier.exposedValue }
        for verifier in verifiers {
            #expect(verifier.count == 43)
            #expect(verifier.allSatisfy { alphabet.contains($0) })
        }
        #expect(Set(verifiers).count == verifiers.count)
    }

    @Test("a fresh challenge is the S256 hash of its own verifier")
    func freshChallengeMatchesVerifier() {
        let pkce = PKCE()
        #expect(pkce.challenge == PKCE(verifier: pkce.verifier.exposedValue).challenge)
        #expect(pkce.challenge != pkce.verifier.exposedValue)
    }

    @Test("the verifier never shows in string interpolation")
    func verifierIsRedacted() {
        let pkce = PKCE()
        #expect(!"\(pkce.verifier)".contains(pkce.verifier.exposedValue))
    }
}
