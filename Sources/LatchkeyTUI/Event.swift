public import Foundation
public import LatchkeyBrokerWire
public import LatchkeyProviders
public import LatchkeySecondFactor
public import LatchkeyVault

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
    /// How the sign-in or phone enrollment on the screen is going (`ScreenInteraction`).
    case signIn(SignInProgress)
    /// The access token to copy, fetched (and refreshed if needed) off the terminal's thread.
    case tokenReady(AccountSummary.ID, Secret)
    case failed(String)
    /// Something done, said on the message line.
    case notice(String)
    /// `latchkey demo`: the panel changed (an SMS arrived, the phone app's code changed).
    case demoPanel(DemoPanel)
    /// The installed presets, for the add-provider screen.
    case presetsLoaded([AddProviderScreen.Choice])
    /// `name` was written to `file`, and providers.d read again.
    case providerAdded(name: String, file: String, providers: [ProviderSummary])
    /// The provider file was not written, and why.
    case providerNotAdded(String)
    /// `latchkey agent` holds a token release for a person's approval (`confirm = true`).
    case releaseWaiting(WaitingRelease)
    /// That release no longer waits: answered (here or elsewhere), timed out or withdrawn.
    case releaseClosed(Int)
}

/// How the sign-in or phone enrollment on the screen is going: one case per step of
/// `SignInFlow` that the person sees or answers, as reported through `SignInInteraction`.
public enum SignInProgress: Sendable, Equatable {
    /// Over SSH: how to sign in at `provider`, whose sign-in would open a browser here (answered
    /// with `PromptAnswer.redirectMode`).
    case redirectModeNeeded(provider: String)
    case authorizationStarted(url: URL, redirectURI: String, listeningOn: [String])
    case browserUnavailable(reason: String)
    case deviceCode(DeviceCode)
    /// Paste mode: the core waits for the final redirect URL (answered with `PromptAnswer.redirectURL`).
    case pasteRequested(url: URL, redirectURI: String)
    /// Registering Latchkey at `provider` took a second try; `problem` says what the server got wrong.
    case clientRegistrationCorrected(provider: String, problem: String)
    /// The first factor is a sign-in at the OpenID provider `provider` (`first_factor = "provider:NAME"`).
    case federatedSignInStarted(provider: String)
    /// That sign-in passed; its ID token goes to the firebase provider next.
    case federatedSignInPassed(provider: String)
    /// Email and password are wanted (answered with `PromptAnswer.credentials`).
    case credentialsNeeded
    /// Pick one of the enrolled factors (answered with `PromptAnswer.hint`).
    case chooseHint([SecondFactorHint])
    /// A code was sent to `hint` (or is expected from its app); `notice` says why it was sent again.
    case codeSent(SecondFactorHint, notice: String?)
    /// Type the code (answered with `PromptAnswer.code`); `problem` is the last attempt's error.
    case codeNeeded(SecondFactorHint, problem: SignInProblem?, canResend: Bool)
    /// The account was signed in (or its phone enrolled) and stored.
    case finished(AccountSummary, added: Bool)
    /// The sign-in or enrollment stopped.
    case failed(SignInProblem)
}

/// Why a sign-in stopped or an answer was refused, and what the screen offers next.
public struct SignInProblem: Sendable, Equatable {
    public var message: String
    public var recovery: FirebaseAuthError.Recovery

    public init(message: String, recovery: FirebaseAuthError.Recovery) {
        self.message = message
        self.recovery = recovery
    }

    /// Any error: its message, and the recovery a firebase backend error offers (none otherwise).
    public init(_ error: any Error) {
        if let error = error as? FirebaseAuthError {
            self.init(message: error.description, recovery: error.recovery)
        } else {
            self.init(message: (error as? any LatchkeyError)?.description ?? String(describing: error), recovery: .none)
        }
    }
}

/// A device authorization as the screen shows it (RFC 8628 §3.2), without the device code.
public struct DeviceCode: Sendable, Equatable {
    public var userCode: String
    /// `verification_uri`: where to type the code.
    public var verificationURI: String
    /// `verification_uri_complete`: the same with the code filled in, for the QR code.
    public var verificationURIComplete: String?
    public var expiresIn: Int
    /// Seconds between polls.
    public var interval: Int
    /// The client asking, named in the phishing warning.
    public var clientID: String

    public init(
        userCode: String, verificationURI: String, verificationURIComplete: String?, expiresIn: Int, interval: Int, clientID: String
    ) {
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
        self.clientID = clientID
    }
}

/// What the person answered on a screen the core is waiting on (`PromptReplies`).
public enum PromptAnswer: Sendable, Equatable {
    case redirectMode(OAuthClient.RedirectMode)
    case redirectURL(String)
    case credentials(email: String, password: Secret)
    case hint(id: String)
    case code(CodeAnswer)
    case cancel
}

/// Work the state asks for; the loop's `EffectRunner` does it.
public enum Effect: Sendable, Equatable {
    case unlock(Secret)
    case loadAccounts
    /// Sign in to the provider; `mode` overrides its redirect mode (paste or device chosen on
    /// screen); `account` makes it a sign-in again of that account (`login_hint`, and an answer
    /// naming anyone else is refused), as `latchkey login PROVIDER:ACCOUNT` does.
    case startSignIn(provider: String, mode: OAuthClient.RedirectMode? = nil, account: AccountSelector? = nil)
    /// Hand the person's answer to the sign-in waiting for it.
    case answer(PromptAnswer)
    /// Enroll a phone for a signed-in firebase account (the code is asked on screen).
    case enrollPhone(AccountSelector, phoneNumber: String, displayName: String?)
    case cancelSignIn
    case refresh(AccountSelector)
    case signOut(AccountSelector)
    case copyToken(AccountSelector)
    /// Make the account the one its bare provider name selects.
    case makeDefault(AccountSelector)
    /// Map the account's provider to it in the directory the screen runs in (config.toml).
    case mapHere(AccountSelector)
    /// Read the installed presets for the add-provider screen.
    case loadPresets
    /// Write the provider file (only if it loads) and read providers.d again.
    case addProvider(ProviderDraft)
    /// Put `text` on the clipboard with OSC 52. Carries a token: never drawn, never logged.
    case writeClipboard(Secret)
    /// `latchkey demo`: the demo browser plays the person at the demo provider.
    case demoBrowse(DemoVisit)
    /// Tell the agent the person's answer to a waiting release.
    case answerRelease(id: Int, approve: Bool)
    case beep
    case quit
}
