public import Foundation
public import LatchkeyCore

/// Something that happened: a key, the clock, the terminal, or async work finishing.
///
/// Async work (sign-in, refresh, sign-out) never touches the state; it posts one of these into the
/// `Inbox`, and the loop hands it to `AppState.handle(_:)` on the terminal's thread.
public enum Event: Sendable {
    case key(Key)
    /// The loop's regular wake-up (about ten times a second): countdowns, spinner, proactive refresh.
    case tick(Date)
    case resize(TerminalSize)
    /// The keystore was read (at start, after unlocking, after a sign-in).
    case accountsLoaded([AccountSummary], backend: String)
    /// The vault needs a passphrase before anything can be shown.
    case unlockNeeded(UnlockPrompt)
    /// The vault could not be opened with the passphrase typed (the message says why).
    case unlockFailed(String)
    case accountUpdated(AccountSummary)
    case refreshFailed(AccountSummary.ID, String)
    case signedOut(AccountSummary.ID, note: String)
    case signOutFailed(AccountSummary.ID, String)
    case signIn(SignInProgress)
    /// The access token to copy, fetched (and refreshed if needed) off the terminal's thread.
    case tokenReady(AccountSummary.ID, Secret)
    case failed(String)
}

/// How a sign-in started from the screen is going, as reported through `SignInInteraction`.
public enum SignInProgress: Sendable, Equatable {
    case authorizationStarted(url: URL, redirectURI: String, listeningOn: [String])
    case browserUnavailable(reason: String)
    case deviceCode(userCode: String, verificationURI: String, expiresIn: Int)
    case finished(AccountSummary, added: Bool)
    case failed(provider: String, message: String)
    case cancelled
}

/// Work the state asks for; the loop's `EffectRunner` does it.
public enum Effect: Sendable, Equatable {
    case unlock(Secret)
    case loadAccounts
    case startSignIn(provider: String)
    case cancelSignIn
    case refresh(AccountSelector)
    case signOut(AccountSelector)
    case copyToken(AccountSelector)
    /// Put `text` on the clipboard with OSC 52. Carries a token: never drawn, never logged.
    case writeClipboard(Secret)
    case beep
    case quit
}
