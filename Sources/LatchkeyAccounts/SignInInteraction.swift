public import Foundation
public import LatchkeyOAuth
public import LatchkeyProviders
public import LatchkeySecondFactor
public import LatchkeyVault

/// The person's side of every sign-in, whatever the provider's kind: implemented by the command
/// line, the screen and test scripts.
///
/// `SignInFlow` decides what happens; these calls only show things and collect what the person
/// types. A `nil` or thrown answer cancels the sign-in.
public protocol SignInInteraction: Sendable {
    // MARK: Browser, paste and device first factor

    /// A browser sign-in at `provider` is about to listen on this machine: how to sign in
    /// instead, when the person is elsewhere (over SSH the screen asks: paste, device code, or a
    /// browser here anyway). `nil` cancels.
    func chooseRedirectMode(for provider: OAuthProvider) async -> OAuthClient.RedirectMode?
    /// The browser is about to be sent to `url`; the listener waits at `redirectURI`.
    func authorizationStarted(url: URL, provider: OAuthProvider, redirectURI: String, listeningOn: [String]) async
    /// Launching a browser failed or there is none: the person must open `url` themselves.
    func browserUnavailable(url: URL, reason: String) async
    /// Paste mode: ask for the final redirect URL (any length) after the person opened `url`.
    func pasteRedirectURL(url: URL, provider: OAuthProvider, redirectURI: String) async throws -> String
    /// Device mode: show the user code and where to enter it; polling runs meanwhile.
    func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: OAuthProvider) async
    /// Registering Latchkey at `provider` (RFC 7591) took a second try because the server got the
    /// first wrong: `problem` says what, for the person to pass on to the server's administrator.
    func clientRegistrationCorrected(at provider: OAuthProvider, problem: String) async

    // MARK: Firebase first factor

    /// The first factor of `provider` is a sign-in at `firstFactor` (`first_factor = "provider:NAME"`):
    /// its browser, paste or device steps follow.
    func federatedSignInStarted(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async
    /// That sign-in passed; its ID token goes to `provider` next.
    func federatedSignInPassed(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async
    /// Email and password for `provider`; `nil` cancels.
    func credentials(for provider: FirebaseProvider) async -> PasswordCredentials?

    // MARK: Second factor

    /// Which factor to use; `nil` cancels.
    func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint?
    /// A code was sent to (or is expected from) `session.hint`; `notice` says why it was sent again.
    func verificationStarted(_ session: VerificationSession, notice: FirebaseAuthError?) async
    /// The code the person entered, a request for a new one, or cancel; `problem` is the last error.
    func enterCode(for session: VerificationSession, problem: FirebaseAuthError?) async -> CodeAnswer
}

/// Email and password typed for a firebase first factor.
public struct PasswordCredentials: Sendable, Equatable {
    public var email: String
    public var password: Secret

    public init(email: String, password: Secret) {
        self.email = email
        self.password = password
    }
}
