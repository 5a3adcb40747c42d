public import Foundation
public import LatchkeyAccounts
public import LatchkeyBroker
public import LatchkeyOAuth
public import LatchkeyProviders
public import LatchkeySecondFactor
import LatchkeyVault
import Synchronization

/// A person following a script through any sign-in: what they type, which factor they pick, and
/// their answer to each code prompt. Everything they were shown is logged for the assertions.
public final class ScriptedPerson: SignInInteraction {
    public struct Log: Sendable {
        public var redirectModesAsked: [String] = []
        public var authorizationURLs: [URL] = []
        public var browserProblems: [String] = []
        public var deviceCodes: [String] = []
        public var federatedStarted: [String] = []
        /// What the servers got wrong registering Latchkey, as the person was told.
        public var registrationCorrections: [String] = []
        public var federatedPassed: [String] = []
        public var credentialsAsked = 0
        public var hintsShown: [[SecondFactorHint]] = []
        public var sessions: [VerificationSession] = []
        public var problems: [FirebaseAuthError?] = []
        public var notices: [FirebaseAuthError?] = []
        /// Each release asked about: account, requester, seconds.
        public var releasesAsked: [(account: String, requester: String, seconds: Int)] = []
        /// Each request for more scope shown: the scopes, the account, who asked.
        public var scopesAsked: [(scopes: [String], account: String, askedBy: String)] = []
    }

    let credentials: PasswordCredentials?
    let pastedURL: @Sendable (URL) async -> String?
    let choose: @Sendable ([SecondFactorHint]) -> SecondFactorHint?
    let answer: @Sendable (VerificationSession, Int) async -> CodeAnswer
    let deviceCodeShown: @Sendable (DeviceAuthorization) async -> Void
    let redirectMode: OAuthClient.RedirectMode?
    let release: @Sendable (String) -> Bool?
    let acceptScopes: @Sendable ([String]) -> Bool
    private let state = Mutex(Log())

    public var log: Log { state.withLock { $0 } }

    /// `answer` gets the session and the attempt number (1 for the first code asked);
    /// `deviceCodeShown` is the person reading a device code off the screen; `release` answers a
    /// `confirm = true` release of the account it names (`nil`: nobody answers in time);
    /// `acceptScopes` answers a server's request for more scope.
    public init(
        credentials: PasswordCredentials? = nil, choose: @escaping @Sendable ([SecondFactorHint]) -> SecondFactorHint? = { $0.first },
        answer: @escaping @Sendable (VerificationSession, Int) async -> CodeAnswer,
        pastedURL: @escaping @Sendable (URL) async -> String? = { _ in nil },
        deviceCodeShown: @escaping @Sendable (DeviceAuthorization) async -> Void = { _ in },
        redirectMode: OAuthClient.RedirectMode? = .loopback, release: @escaping @Sendable (String) -> Bool? = { _ in nil },
        acceptScopes: @escaping @Sendable ([String]) -> Bool = { _ in false }
    ) {
        self.redirectMode = redirectMode
        self.release = release
        self.acceptScopes = acceptScopes
        self.credentials = credentials
        self.choose = choose
        self.answer = answer
        self.pastedURL = pastedURL
        self.deviceCodeShown = deviceCodeShown
    }

    public func chooseRedirectMode(for provider: OAuthProvider) async -> OAuthClient.RedirectMode? {
        state.withLock { $0.redirectModesAsked.append(provider.name) }
        return redirectMode
    }

    public func authorizationStarted(url: URL, provider: OAuthProvider, redirectURI: String, listeningOn: [String]) async {
        state.withLock { $0.authorizationURLs.append(url) }
    }

    public func browserUnavailable(url: URL, reason: String) async {
        state.withLock { $0.browserProblems.append(reason) }
    }

    public func pasteRedirectURL(url: URL, provider: OAuthProvider, redirectURI: String) async throws -> String {
        guard let pasted = await pastedURL(url) else { throw SignInError.cancelled }
        return pasted
    }

    public func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: OAuthProvider) async {
        state.withLock { $0.deviceCodes.append(authorization.userCode) }
        await deviceCodeShown(authorization)
    }

    public func clientRegistrationCorrected(at provider: OAuthProvider, problem: String) async {
        state.withLock { $0.registrationCorrections.append(problem) }
    }

    public func federatedSignInStarted(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async {
        state.withLock { $0.federatedStarted.append(firstFactor.name) }
    }

    public func federatedSignInPassed(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async {
        state.withLock { $0.federatedPassed.append(firstFactor.name) }
    }

    public func credentials(for provider: FirebaseProvider) async -> PasswordCredentials? {
        state.withLock { $0.credentialsAsked += 1 }
        return credentials
    }

    public func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint? {
        state.withLock { $0.hintsShown.append(hints) }
        return choose(hints)
    }

    public func verificationStarted(_ session: VerificationSession, notice: FirebaseAuthError?) async {
        state.withLock {
            $0.sessions.append(session)
            $0.notices.append(notice)
        }
    }

    public func enterCode(for session: VerificationSession, problem: FirebaseAuthError?) async -> CodeAnswer {
        let attempt = state.withLock { log in
            log.problems.append(problem)
            return log.problems.count
        }
        return await answer(session, attempt)
    }
}

extension PasswordCredentials {
    /// `USER@example.com` with the password `USER-password`, as the seeded test users have.
    public static func seeded(_ user: String) -> PasswordCredentials {
        PasswordCredentials(email: "\(user)@example.com", password: Secret("\(user)-password"))
    }
}

extension ScriptedPerson: ReleaseApproval, ScopeApproval {
    public func approveRelease(of account: String, to requester: String, within seconds: Int) async -> Bool? {
        state.withLock { $0.releasesAsked.append((account, requester, seconds)) }
        return release(account)
    }

    public func approveScopes(_ scopes: [String], for account: String, askedBy: String) async -> Bool {
        state.withLock { $0.scopesAsked.append((scopes, account, askedBy)) }
        return acceptScopes(scopes)
    }
}
