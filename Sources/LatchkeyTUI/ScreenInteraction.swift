public import Foundation
public import LatchkeyCore

/// The screen's side of every sign-in: each call becomes an event for the terminal loop, and
/// what the person types on a screen (a pasted URL, a password, a code) comes back through `replies`.
public struct ScreenInteraction: SignInInteraction {
    let inbox: Inbox
    let replies: PromptReplies

    public init(inbox: Inbox, replies: PromptReplies) {
        self.inbox = inbox
        self.replies = replies
    }

    // MARK: - Browser, paste and device

    public func authorizationStarted(url: URL, provider: OAuthProvider, redirectURI: String, listeningOn: [String]) async {
        post(.signIn(.authorizationStarted(url: url, redirectURI: redirectURI, listeningOn: listeningOn)))
    }

    public func browserUnavailable(url: URL, reason: String) async {
        post(.signIn(.browserUnavailable(reason: reason)))
    }

    /// Puts the paste line on the screen and waits for the line typed (or pasted) there.
    public func pasteRedirectURL(url: URL, provider: OAuthProvider, redirectURI: String) async throws -> String {
        post(.signIn(.pasteRequested(url: url, redirectURI: redirectURI)))
        guard case .redirectURL(let line) = await replies.next() else { throw SignInError.cancelled }
        return line.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: OAuthProvider) async {
        post(
            .signIn(
                .deviceCode(
                    DeviceCode(
                        userCode: authorization.userCode, verificationURI: authorization.verificationURI,
                        verificationURIComplete: authorization.verificationURIComplete, expiresIn: authorization.expiresIn,
                        interval: authorization.interval, clientID: provider.clientID))))
    }

    // MARK: - Firebase first factor

    public func federatedSignInStarted(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async {
        post(.secondFactor(.firstFactorSignIn(provider: firstFactor.name)))
    }

    public func federatedSignInPassed(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async {
        post(.secondFactor(.firstFactorPassed(provider: firstFactor.name)))
    }

    public func credentials(for provider: FirebaseProvider) async -> PasswordCredentials? {
        post(.secondFactor(.credentialsNeeded))
        guard case .credentials(let email, let password) = await replies.next() else { return nil }
        return PasswordCredentials(email: email, password: password)
    }

    // MARK: - Second factor

    public func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint? {
        post(.secondFactor(.chooseHint(hints)))
        guard case .hint(let id) = await replies.next() else { return nil }
        return hints.first { $0.id == id }
    }

    public func verificationStarted(_ session: VerificationSession, notice: SecondFactorError?) async {
        post(.secondFactor(.codeSent(session.hint, notice: notice.map { "\($0.description); a new code was sent." })))
    }

    public func enterCode(for session: VerificationSession, problem: SecondFactorError?) async -> CodeAnswer {
        post(
            .secondFactor(
                .codeNeeded(session.hint, problem: problem.map(SecondFactorProgress.Problem.init), canResend: session.hint.kind == .phone)))
        guard case .code(let answer) = await replies.next() else { return .cancel }
        return answer
    }

    /// A sign-in the screen already left (cancelled, or replaced by paste or device mode) says nothing more.
    private func post(_ event: Event) {
        guard !Task.isCancelled else { return }
        inbox.post(event)
    }
}
