public import Foundation
public import LatchkeyCore

/// The screen's side of a sign-in: each call becomes an event for the terminal loop, and the
/// pasted redirect URL comes back through `replies`.
public struct ScreenInteraction: SignInInteraction {
    let inbox: Inbox
    let replies: PromptReplies

    public init(inbox: Inbox, replies: PromptReplies) {
        self.inbox = inbox
        self.replies = replies
    }

    public func authorizationStarted(url: URL, provider: Provider, redirectURI: String, listeningOn: [String]) async {
        post(.authorizationStarted(url: url, redirectURI: redirectURI, listeningOn: listeningOn))
    }

    public func browserUnavailable(url: URL, reason: String) async {
        post(.browserUnavailable(reason: reason))
    }

    /// Puts the paste line on the screen and waits for the line typed (or pasted) there.
    public func pasteRedirectURL(url: URL, provider: Provider, redirectURI: String) async throws -> String {
        post(.pasteRequested(url: url, redirectURI: redirectURI))
        guard case .redirectURL(let line) = await replies.next() else { throw SignInError.cancelled }
        return line.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: Provider) async {
        post(
            .deviceCode(
                DeviceCode(
                    userCode: authorization.userCode, verificationURI: authorization.verificationURI,
                    verificationURIComplete: authorization.verificationURIComplete, expiresIn: authorization.expiresIn,
                    interval: authorization.interval, clientID: provider.clientID)))
    }

    /// A sign-in the screen already left (cancelled, or replaced by paste or device mode) says nothing more.
    private func post(_ progress: SignInProgress) {
        guard !Task.isCancelled else { return }
        inbox.post(.signIn(progress))
    }
}
