public import Foundation
public import LatchkeyCore

/// What the browser, paste and device sign-in screens show while a sign-in runs.
public struct SignInScreen: Sendable, Equatable {
    public var provider: String
    public var startedAt: Date
    /// The mode asked for on this screen (nil: the provider's own).
    public var mode: OAuthClient.RedirectMode?
    /// Over SSH the screen asks first how to sign in (a browser here would open remotely).
    public var choosingMode = false
    /// Where the browser was sent (the authorization request), once known.
    public var authorizationURL: URL?
    public var redirectURI: String?
    public var listeningOn: [String] = []
    /// Why no browser could be started, when none could.
    public var browserProblem: String?
    public var device: DeviceCode?
    public var deviceExpiresAt: Date?
    /// Paste mode, once the core waits for the redirect URL.
    public var paste: Paste?
    /// The firebase provider this sign-in is the first factor of (`first_factor = "provider:NAME"`):
    /// its second-factor screens follow, and starting over starts that provider's sign-in.
    public var firstFactorOf: String?

    /// The paste line and what it is for.
    public struct Paste: Sendable, Equatable {
        public var redirectURI: String
        public var entry = TextEntry()
        /// Sent to the core; the screen waits for the sign-in to finish.
        public var submitted = false
    }

    public init(
        provider: String, startedAt: Date, mode: OAuthClient.RedirectMode? = nil, choosingMode: Bool = false, firstFactorOf: String? = nil
    ) {
        self.provider = provider
        self.startedAt = startedAt
        self.mode = mode
        self.choosingMode = choosingMode
        self.firstFactorOf = firstFactorOf
    }

    /// The sign-in `.startSignIn` runs for this screen: the firebase provider's when this is its first factor.
    var signInProvider: String { firstFactorOf ?? provider }

    /// This screen again from the start, signing in with `mode`.
    func restarted(mode: OAuthClient.RedirectMode, now: Date) -> SignInScreen {
        SignInScreen(provider: provider, startedAt: now, mode: mode, firstFactorOf: firstFactorOf)
    }

    /// The sign-in runs with a browser and a listener on this machine (so `p` and `d` can switch).
    var isLoopback: Bool { !choosingMode && device == nil && paste == nil && mode != .paste && mode != .device }

    /// What the demo browser can do for the person here, once the provider has answered: approve
    /// the device code, or sign in at the authorization URL the listener waits on.
    var demoVisit: DemoVisit? {
        if let device {
            return URL(string: device.verificationURI).map { .device(verificationURI: $0, userCode: device.userCode) }
        }
        guard isLoopback, let authorizationURL else { return nil }
        return .authorization(authorizationURL)
    }

    mutating func apply(_ progress: SignInProgress, now: Date) {
        switch progress {
        case .authorizationStarted(let url, let redirectURI, let listeningOn):
            authorizationURL = url
            self.redirectURI = redirectURI
            self.listeningOn = listeningOn
        case .browserUnavailable(let reason):
            browserProblem = reason
        case .deviceCode(let code):
            device = code
            deviceExpiresAt = now.addingTimeInterval(TimeInterval(code.expiresIn))
        case .pasteRequested(let url, let redirectURI):
            authorizationURL = url
            paste = Paste(redirectURI: redirectURI)
        case .finished, .failed, .cancelled:
            break
        }
    }
}
