import LatchkeyTestSupport
import Testing

@testable import LatchkeySecondFactor
@testable import LatchkeyVault

@Suite("The second-factor resolver as a pure state machine")
struct SecondFactorResolverTests {
    static let phone = SecondFactorHint(id: "p1", kind: .phone, displayName: "Work", phoneNumber: "+*******0100")
    static let totp = SecondFactorHint(id: "t1", kind: .totp, displayName: "App", phoneNumber: nil)
    static let pending = PendingCredential(Secret("pending"))
    static let tokens = SignInTokens(idToken: Secret("id"), refreshToken: Secret("refresh"), expiresIn: nil)

    func resolverAwaitingCode(_ hint: SecondFactorHint = phone) -> (SecondFactorResolver, VerificationSession) {
        var resolver = SecondFactorResolver()
        _ = resolver.firstFactorFinished(.secondFactorRequired(hints: [Self.phone, Self.totp], pending: Self.pending))
        _ = resolver.hintChosen(hint)
        let session = VerificationSession(sessionInfo: hint.kind == .phone ? Secret("s") : nil, hint: hint)
        _ = resolver.verificationStarted(session)
        return (resolver, session)
    }

    @Test("an account without a second factor is signed in straight after the first factor")
    func noSecondFactor() {
        var resolver = SecondFactorResolver()
        #expect(resolver.firstFactorFinished(.signedIn(Self.tokens)) == .verified(Self.tokens, factor: nil))
    }

    @Test("hints are offered, the chosen one is started, its code finalized, and the factor reported")
    func happyPath() {
        var resolver = SecondFactorResolver()
        #expect(
            resolver.firstFactorFinished(.secondFactorRequired(hints: [Self.phone, Self.totp], pending: Self.pending))
                == .chooseHint([Self.phone, Self.totp]))
        #expect(resolver.hintChosen(Self.phone) == .startVerification(Self.phone, .signIn(Self.pending), notice: nil))
        let session = VerificationSession(sessionInfo: Secret("s"), hint: Self.phone)
        #expect(resolver.verificationStarted(session) == .askForCode(session, problem: nil))
        #expect(resolver.codeEntered(Secret(" 123 456 ")) == .finalize(session, code: Secret("123456"), .signIn(Self.pending)))
        #expect(resolver.finalized(Self.tokens) == .verified(Self.tokens, factor: Self.phone))
    }

    @Test("a hint that was not offered is not started")
    func foreignHint() {
        var resolver = SecondFactorResolver()
        _ = resolver.firstFactorFinished(.secondFactorRequired(hints: [Self.phone], pending: Self.pending))
        #expect(resolver.hintChosen(Self.totp) == .chooseHint([Self.phone]))
    }

    @Test("a wrong code asks again for the same session")
    func wrongCodeRetries() {
        var (resolver, session) = resolverAwaitingCode()
        _ = resolver.codeEntered(Secret("000000"))
        #expect(resolver.failed(.wrongCode) == .askForCode(session, problem: .wrongCode))
    }

    @Test("an expired phone code sends a new one, at most three times in a row")
    func expiredCodeResends() {
        var (resolver, _) = resolverAwaitingCode()
        let expired = FirebaseAuthError.codeExpired(code: "SESSION_EXPIRED")
        for _ in 0..<SecondFactorResolver.maximumAutomaticResends {
            _ = resolver.codeEntered(Secret("1"))
            #expect(resolver.failed(expired) == .startVerification(Self.phone, .signIn(Self.pending), notice: expired))
            _ = resolver.verificationStarted(VerificationSession(sessionInfo: Secret("s"), hint: Self.phone))
        }
        _ = resolver.codeEntered(Secret("1"))
        #expect(resolver.failed(expired) == .fail(expired))
    }

    @Test("an expired TOTP code asks for the next code instead of sending anything")
    func expiredTOTP() {
        var (resolver, session) = resolverAwaitingCode(Self.totp)
        _ = resolver.codeEntered(Secret("1"))
        let expired = FirebaseAuthError.codeExpired(code: "SESSION_EXPIRED")
        #expect(resolver.failed(expired) == .askForCode(session, problem: expired))
    }

    @Test(
        "rate limits, quota and a dead pending credential stop the flow with what to do next",
        arguments: [
            (FirebaseAuthError.tooManyAttempts, FirebaseAuthError.Recovery.wait),
            (.quotaExceeded, .wait),
            (.pendingCredentialInvalid(code: "INVALID_MFA_PENDING_CREDENTIAL"), .restart),
            (.userDisabled, .none),
        ])
    func stops(error: FirebaseAuthError, recovery: FirebaseAuthError.Recovery) {
        var (resolver, _) = resolverAwaitingCode()
        _ = resolver.codeEntered(Secret("1"))
        #expect(resolver.failed(error) == .fail(error))
        #expect(error.recovery == recovery)
    }

    @Test("events out of order end the flow instead of being guessed at")
    func outOfOrder() {
        var resolver = SecondFactorResolver()
        #expect(resolver.codeEntered(Secret("1")) == .outOfOrder("an entered code"))
        #expect(resolver.firstFactorFinished(.signedIn(Self.tokens)) == .outOfOrder("the first factor's answer"))
    }
}
