public import Foundation

/// What the browser sign-in screen shows while a sign-in runs.
public struct SignInScreen: Sendable, Equatable {
    public var provider: String
    public var startedAt: Date
    /// Where the browser was sent (the authorization request), once known.
    public var authorizationURL: URL?
    public var redirectURI: String?
    public var listeningOn: [String] = []
    /// Why no browser could be started, when none could.
    public var browserProblem: String?
    public var userCode: String?
    public var verificationURI: String?
    public var deviceExpiresAt: Date?

    public init(provider: String, startedAt: Date) {
        self.provider = provider
        self.startedAt = startedAt
    }

    mutating func apply(_ progress: SignInProgress) {
        switch progress {
        case .authorizationStarted(let url, let redirectURI, let listeningOn):
            authorizationURL = url
            self.redirectURI = redirectURI
            self.listeningOn = listeningOn
        case .browserUnavailable(let reason):
            browserProblem = reason
        case .deviceCode(let userCode, let verificationURI, let expiresIn):
            self.userCode = userCode
            self.verificationURI = verificationURI
            deviceExpiresAt = startedAt.addingTimeInterval(TimeInterval(expiresIn))
        case .finished, .failed, .cancelled:
            break
        }
    }
}
