public import Foundation

/// The person's side of a sign-in, implemented by the command line and by the screen.
///
/// The core decides what happens; these calls only show things and collect what the person types.
public protocol SignInInteraction: Sendable {
    /// The browser is about to be sent to `url`; the listener waits at `redirectURI`.
    func authorizationStarted(url: URL, provider: Provider, redirectURI: String, listeningOn: [String]) async
    /// Launching a browser failed or there is none: the person must open `url` themselves.
    func browserUnavailable(url: URL, reason: String) async
    /// Paste mode: ask for the final redirect URL (any length) after the person opened `url`.
    func pasteRedirectURL(url: URL, provider: Provider, redirectURI: String) async throws -> String
    /// Device mode: show the user code and where to enter it; polling runs meanwhile.
    func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: Provider) async
}
