public import Foundation
public import LatchkeyAccounts
public import LatchkeyOAuth
public import LatchkeyProviders
public import LatchkeySecondFactor

/// The screen's side of every sign-in and phone enrollment: each call becomes one
/// `SignInProgress` for the terminal loop, and what the person answers on the screen (a mode, a
/// pasted URL, a password, a factor, a code) comes back through `replies`.
public struct ScreenInteraction: SignInInteraction {
    let inbox: Inbox
    let replies: PromptReplies
    /// Over SSH (`$SSH_CONNECTION`) a browser started here would open on the remote machine, so
    /// the screen asks how to sign in instead.
    let isRemote: Bool

    public init(inbox: Inbox, replies: PromptReplies, isRemote: Bool) {
        self.inbox = inbox
        self.replies = replies
        self.isRemote = isRemote
    }

    // MARK: - Browser, paste and device

    public func chooseRedirectMode(for provider: OAuthProvider) async -> OAuthClient.RedirectMode? {
        guard isRemote else { return .loopback }
        post(.redirectModeNeeded(provider: provider.displayName))
        guard case .redirectMode(let mode) = await replies.next() else { return nil }
        return mode
    }

    public func authorizationStarted(url: URL, provider: OAuthProvider, redirectURI: String, listeningOn: [String]) async {
        post(.authorizationStarted(url: url, redirectURI: redirectURI, listeningOn: listeningOn))
    }

    public func browserUnavailable(url: URL, reason: String) async {
        post(.browserUnavailable(reason: reason))
    }

    /// Puts the paste line on the screen and waits for the line typed (or pasted) there.
    public func pasteRedirectURL(url: URL, provider: OAuthProvider, redirectURI: String) async throws -> String {
        post(.pasteRequested(url: url, redirectURI: redirectURI))
        guard case .redirectURL(let line) = await replies.next() else { throw SignInError.cancelled }
        return line.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: OAuthProvider) async {
        post(
            .deviceCode(
                DeviceCode(
                    userCode: authorization.userCode, verificationURI: authorization.verificationURI,
                    verificationURIComplete: authorization.verificationURIComplete, expiresIn: authorization.expiresIn,
                    interval: authorization.interval, clientID: provider.clientID)))
    }

    public func clientRegistrationCorrected(at provider: OAuthProvider, problem: String) async {
        post(.clientRegistrationCorrected(provider: provider.displayName, problem: problem))
    }

    // MARK: - Firebase first factor

    public func federatedSignInStarted(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async {
        post(.federatedSignInStarted(provider: firstFactor.displayName))
    }

    public func federatedSignInPassed(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async {
        post(.federatedSignInPassed(provider: firstFactor.displayName))
    }

    public func credentials(for provider: FirebaseProvider) async -> PasswordCredentials? {
        post(.credentialsNeeded)
        guard case .credentials(let email, let password) = await replies.next() else { return nil }
        return PasswordCredentials(email: email, password: password)
    }

    // MARK: - Second factor

    public func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint? {
        post(.chooseHint(hints))
        guard case .hint(let id) = await replies.next() else { return nil }
        return hints.first { $0.id == id }
    }

    public func verificationStarted(_ session: VerificationSession, notice: FirebaseAuthError?) async {
        post(.codeSent(session.hint, notice: notice.map { "\($0.description); a new code was sent." }))
    }

    public func enterCode(for session: VerificationSession, problem: FirebaseAuthError?) async -> CodeAnswer {
        post(.codeNeeded(session.hint, problem: problem.map(SignInProblem.init), canResend: session.hint.kind == .phone))
        guard case .code(let answer) = await replies.next() else { return .cancel }
        return answer
    }

    /// A sign-in the screen already left (cancelled, or replaced by paste or device mode) says nothing more.
    private func post(_ progress: SignInProgress) {
        guard !Task.isCancelled else { return }
        inbox.post(.signIn(progress))
    }
}
