public import Foundation
public import LatchkeyCore

/// The screen's side of a sign-in: each call becomes an event for the terminal loop.
public struct ScreenInteraction: SignInInteraction {
    let inbox: Inbox

    public init(inbox: Inbox) { self.inbox = inbox }

    public func authorizationStarted(url: URL, provider: Provider, redirectURI: String, listeningOn: [String]) async {
        inbox.post(.signIn(.authorizationStarted(url: url, redirectURI: redirectURI, listeningOn: listeningOn)))
    }

    public func browserUnavailable(url: URL, reason: String) async {
        inbox.post(.signIn(.browserUnavailable(reason: reason)))
    }

    /// Pasting inside the screen is not there yet: the sign-in ends with a pointer to the command.
    public func pasteRedirectURL(url: URL, provider: Provider, redirectURI: String) async throws -> String {
        throw ScreenSignInError.pasteNotSupported(provider: provider.name)
    }

    public func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: Provider) async {
        inbox.post(
            .signIn(
                .deviceCode(
                    userCode: authorization.userCode,
                    verificationURI: authorization.verificationURIComplete ?? authorization.verificationURI,
                    expiresIn: authorization.expiresIn)))
    }
}

/// Sign-in steps the screen cannot do yet.
public enum ScreenSignInError: LatchkeyError, Equatable {
    case pasteNotSupported(provider: String)

    public var category: FailureCategory { .unavailable }

    public var description: String {
        switch self {
        case .pasteNotSupported(let provider):
            return "pasting the redirect URL is not in the screen yet; run `latchkey login \(provider) --paste`"
        }
    }
}
