public import LatchkeyVault

/// The sign-in service of a `kind = "firebase"` provider: first factor, second factor, phone
/// enrollment and refresh.
///
/// Two implementations: `FirebaseBackend` (the Identity Toolkit REST API) and `ExecBackend`
/// (an external program, latchkey-mfa-plugin(7)). `SecondFactorResolver` decides which call comes next.
public protocol FirebaseAuthBackend: Sendable {
    /// The first factor; tokens, or the hints to choose a second factor from.
    func signIn(_ firstFactor: FirstFactor) async throws(FirebaseAuthError) -> FirstFactorOutcome
    /// Sends a code to `hint` (phone) or prepares for one (TOTP).
    func startSignIn(hint: SecondFactorHint, pending: PendingCredential) async throws(FirebaseAuthError) -> VerificationSession
    /// Proves the second factor with `code`.
    func finalizeSignIn(session: VerificationSession, code: Secret, pending: PendingCredential) async throws(FirebaseAuthError)
        -> SignInTokens
    /// Sends a code to a new phone `phoneNumber` (E.164) of the signed-in account holding `idToken`.
    func startPhoneEnrollment(phoneNumber: String, idToken: Secret) async throws(FirebaseAuthError) -> Secret
    /// Enrolls the phone with the code it received; the returned tokens replace the stored ones.
    func finalizePhoneEnrollment(sessionInfo: Secret, code: Secret, displayName: String?, idToken: Secret)
        async throws(FirebaseAuthError) -> SignInTokens
    /// New tokens for a refresh token.
    func refresh(_ refreshToken: Secret) async throws(FirebaseAuthError) -> SignInTokens
}

extension FirebaseAuthBackend {
    /// Sends the code that proves `purpose` to `hint` (or, for TOTP, prepares for one).
    package func startVerification(_ hint: SecondFactorHint, for purpose: VerificationPurpose) async throws(FirebaseAuthError)
        -> VerificationSession
    {
        switch purpose {
        case .signIn(let pending):
            return try await startSignIn(hint: hint, pending: pending)
        case .enrollment(let enrollment):
            let sessionInfo = try await startPhoneEnrollment(phoneNumber: enrollment.phoneNumber, idToken: enrollment.idToken)
            return VerificationSession(sessionInfo: sessionInfo, hint: hint)
        }
    }

    /// Proves `purpose` with `code`; the tokens that come back replace the account's.
    package func finishVerification(_ session: VerificationSession, code: Secret, for purpose: VerificationPurpose)
        async throws(FirebaseAuthError) -> SignInTokens
    {
        switch purpose {
        case .signIn(let pending):
            return try await finalizeSignIn(session: session, code: code, pending: pending)
        case .enrollment(let enrollment):
            guard let sessionInfo = session.sessionInfo else {
                throw .malformedResponse(backend: "the sign-in service", reason: "the enrollment started without a session")
            }
            return try await finalizePhoneEnrollment(
                sessionInfo: sessionInfo, code: code, displayName: enrollment.displayName, idToken: enrollment.idToken)
        }
    }
}
