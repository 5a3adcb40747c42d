public import LatchkeyVault

/// A service that signs a person in with a first and a second factor.
///
/// Two implementations: `FirebaseBackend` (the Identity Toolkit REST API) and `ExecBackend`
/// (an external program, latchkey-mfa-plugin(7)). `SecondFactorResolver` decides which call comes next.
public protocol SecondFactorBackend: Sendable {
    /// The first factor; tokens, or the hints to choose a second factor from.
    func signIn(_ firstFactor: FirstFactor) async throws(SecondFactorError) -> FirstFactorOutcome
    /// Sends a code to `hint` (phone) or prepares for one (TOTP).
    func startSignIn(hint: SecondFactorHint, pending: PendingCredential) async throws(SecondFactorError) -> VerificationSession
    /// Proves the second factor with `code`.
    func finalizeSignIn(session: VerificationSession, code: Secret, pending: PendingCredential) async throws(SecondFactorError)
        -> SignInTokens
    /// Sends a code to a new phone `phoneNumber` (E.164) of the signed-in account holding `idToken`.
    func startPhoneEnrollment(phoneNumber: String, idToken: Secret) async throws(SecondFactorError) -> Secret
    /// Enrolls the phone with the code it received; the returned tokens replace the stored ones.
    func finalizePhoneEnrollment(sessionInfo: Secret, code: Secret, displayName: String?, idToken: Secret)
        async throws(SecondFactorError) -> SignInTokens
    /// New tokens for a refresh token.
    func refresh(_ refreshToken: Secret) async throws(SecondFactorError) -> SignInTokens
}
