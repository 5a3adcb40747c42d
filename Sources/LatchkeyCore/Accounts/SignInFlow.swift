import Foundation
public import LatchkeyVault

/// One sign-in, for every provider kind, as a pure state machine: events in, actions out.
///
/// A first factor (browser redirect, pasted redirect, device code, email and password, or a whole
/// OpenID sign-in whose ID token is federated into a firebase provider), then an optional second
/// factor (`SecondFactorResolver`), then the account is stored. The machine performs nothing: the
/// command line, the screen and the tests drive it with `SignInRunner`, so every branch can be
/// tested without a browser, a listener or a network.
public struct SignInFlow: Sendable {
    /// How the first factor is obtained, decided once from the provider's kind.
    public enum Route: Sendable, Equatable {
        /// An `oidc` or `oauth2` sign-in in `mode`.
        case oauth(OAuthProvider, mode: OAuthClient.RedirectMode)
        /// A firebase sign-in with email and password.
        case password(FirebaseProvider)
        /// A firebase sign-in whose first factor is a sign-in at `firstFactor` in `mode`.
        case federated(firstFactor: OAuthProvider, mode: OAuthClient.RedirectMode, into: FirebaseProvider)
    }

    /// What the driver does next; each is answered with one `Event`.
    public enum Action: Sendable {
        /// Read the keystore (unlocking it) before the person does any work. → `keystoreOpened`
        case openKeystore
        /// Tell the person something that needs no answer. → `notified`
        case notify(Notice)
        /// Discovery, or the file's endpoints. → `metadataFetched`
        case fetchMetadata(OAuthProvider)
        /// Bind a loopback listener. → `listenerBound`
        case bindListener(OAuthProvider)
        /// Send the browser to the authorization URL and wait for the redirect. → `redirectReceived`
        case openBrowser(PendingAuthorization, listeningOn: [String])
        /// Give the browser that delivered the redirect its page, now that the redirect is
        /// judged, and close the listener. → `browserAnswered`
        case answerBrowser(BrowserAnswer)
        /// Ask for the final redirect URL (paste mode). → `redirectPasted`
        case askForPastedRedirect(PendingAuthorization)
        /// RFC 8628 §3.1. → `deviceAuthorizationStarted`
        case startDeviceAuthorization(OAuthProvider, ServerMetadata)
        /// Show the user code, poll until approved. → `accountIdentified`
        case pollDeviceAuthorization(DeviceAuthorization, OAuthProvider, ServerMetadata)
        /// Exchange the validated code and identify the account. → `accountIdentified`
        case exchange(AuthorizationCode, PendingAuthorization)
        /// Ask for email and password. → `credentialsEntered`
        case askForCredentials(FirebaseProvider)
        /// `accounts:signInWithPassword` / `signInWithIdp`. → `firstFactorAnswered`
        case submitFirstFactor(FirstFactor, FirebaseProvider)
        /// → `hintChosen`
        case chooseHint([SecondFactorHint])
        /// Send a code to `hint` (or prepare for a TOTP one). → `codeSent`
        case sendCode(SecondFactorHint, PendingCredential, notice: SecondFactorError?)
        /// → `codeAnswered`
        case askForCode(VerificationSession, problem: SecondFactorError?)
        /// Prove the second factor. → `secondFactorPassed`
        case finalize(VerificationSession, code: Secret, PendingCredential)
        /// Verify the firebase tokens and build the account. → `accountIdentified`
        case identifyFirebaseAccount(SignInTokens, factor: SecondFactorHint?, FirebaseProvider)
        /// Add or update the account. → `stored`
        case store(AccountRecord)
        /// Done.
        case finished(AccountRecord, AccountService.SignInOutcome)
        /// Stopped; nothing more is stored.
        case failed(any Error)
    }

    /// Something the person is told along the way.
    public enum Notice: Sendable, Equatable {
        case federatedSignInStarted(OAuthProvider, FirebaseProvider)
        case federatedSignInPassed(OAuthProvider, FirebaseProvider)
    }

    /// What an action led to.
    public enum Event: Sendable {
        case keystoreOpened
        case notified
        case metadataFetched(ServerMetadata)
        case listenerBound(port: Int, addresses: [String])
        case redirectReceived(RedirectRequest)
        case browserAnswered
        case redirectPasted(String)
        case deviceAuthorizationStarted(DeviceAuthorization)
        case accountIdentified(AccountRecord)
        case credentialsEntered(PasswordCredentials?)
        case firstFactorAnswered(FirstFactorOutcome)
        case hintChosen(SecondFactorHint?)
        case codeSent(VerificationSession)
        case codeAnswered(CodeAnswer)
        case secondFactorPassed(SignInTokens)
        /// A second-factor backend call failed; its `recovery` decides whether the flow goes on.
        case secondFactorFailed(SecondFactorError)
        case stored(AccountService.SignInOutcome)
        /// Any other effect failed (network, time-out, cancelled): the sign-in ends.
        case effectFailed(any Error)
    }

    enum State: Sendable {
        case start
        case openingKeystore
        case announcing
        case fetchingMetadata(OAuthProvider)
        case binding(OAuthProvider, ServerMetadata)
        case awaitingRedirect(PendingAuthorization)
        /// The redirect is judged; the browser is told before the verdict is acted on.
        case answeringBrowser(Verdict)
        case startingDevice(OAuthProvider, ServerMetadata)
        case identifyingFirstFactor
        /// The ID token of the first factor's account goes to the firebase provider once the person was told.
        case announcingFederatedPass(idToken: Secret, FirebaseProvider)
        case askingCredentials(FirebaseProvider)
        case secondFactor(SecondFactorResolver, FirebaseProvider)
        case identifyingAccount
        /// `isFirstFactor`: the account of a federated sign-in's first factor, not the one signed in to.
        case storing(AccountRecord, isFirstFactor: Bool)
        case over
    }

    /// The account a re-sign-in is for (`latchkey login PROVIDER:ACCOUNT`): its name goes out as
    /// `login_hint`, and an answer naming anyone else is refused before anything is stored.
    public struct ExpectedAccount: Sendable, Equatable {
        public var issuer: String
        public var subject: String
        public var hint: String

        public init(_ record: AccountRecord) {
            issuer = record.issuer
            subject = record.subject
            hint = record.displayName ?? record.subject
        }
    }

    public let route: Route
    public let expected: ExpectedAccount?
    private(set) var state: State = .start

    public init(route: Route, expected: ExpectedAccount? = nil) {
        self.route = route
        self.expected = expected
    }

    /// The route for `provider`: its own redirect mode unless `mode` overrides it (for a
    /// federated firebase provider, `mode` applies to the first factor's sign-in).
    public static func route(
        for provider: Provider, mode: OAuthClient.RedirectMode?, catalog: ProviderCatalog
    ) throws -> Route {
        switch provider.kind {
        case .oidc, .oauth2:
            let oauth = provider.oauth!
            return .oauth(oauth, mode: mode ?? oauth.redirectMode)
        case .firebase(let settings):
            let firebase = provider.firebase!
            switch settings.firstFactor {
            case .password: return .password(firebase)
            case .provider(let name):
                let other = try catalog.provider(named: name)
                guard let first = other.oauth, first.isOpenID else { throw SignInError.notOpenID(provider: name, firebase: provider.name) }
                return .federated(firstFactor: first, mode: mode ?? first.redirectMode, into: firebase)
            }
        }
    }

    // MARK: - Events

    /// The first action.
    public mutating func start() -> Action {
        guard case .start = state else { return unexpected("start") }
        if let provider = oauthProvider, provider.clientID.isEmpty {
            return fail(SignInError.missingClientID(provider: provider.name, file: provider.sourceFile))
        }
        state = .openingKeystore
        return .openKeystore
    }

    public mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (_, .effectFailed(let error)):
            return fail(error)
        case (.openingKeystore, .keystoreOpened):
            switch route {
            case .oauth(let provider, _):
                return fetchMetadata(provider)
            case .password(let firebase):
                state = .askingCredentials(firebase)
                return .askForCredentials(firebase)
            case .federated(let first, _, let firebase):
                state = .announcing
                return .notify(.federatedSignInStarted(first, firebase))
            }
        case (.announcing, .notified):
            guard case .federated(let first, _, _) = route else { return unexpected("notified") }
            return fetchMetadata(first)
        case (.announcingFederatedPass(let idToken, let firebase), .notified):
            guard case .federated(let first, _, _) = route else { return unexpected("notified") }
            return startSecondFactor(.federated(providerID: first.firebaseProviderID, idToken: idToken), firebase)
        case (.fetchingMetadata(let provider), .metadataFetched(let metadata)):
            switch mode {
            case .loopback:
                state = .binding(provider, metadata)
                return .bindListener(provider)
            case .paste:
                // No listener: the port (a registered one, if the provider demands one) is only a
                // placeholder the browser fails to reach, leaving the whole redirect URL in its
                // address bar for the person to copy.
                let pending = PendingAuthorization(
                    provider: provider, metadata: metadata,
                    redirectURI: provider.redirectURI(port: provider.loopbackPorts.first ?? Self.pastePort()),
                    loginHint: loginHint(for: provider))
                state = .awaitingRedirect(pending)
                return .askForPastedRedirect(pending)
            case .device:
                state = .startingDevice(provider, metadata)
                return .startDeviceAuthorization(provider, metadata)
            }
        case (.binding(let provider, let metadata), .listenerBound(let port, let addresses)):
            let pending = PendingAuthorization(
                provider: provider, metadata: metadata, redirectURI: provider.redirectURI(port: port), loginHint: loginHint(for: provider))
            state = .awaitingRedirect(pending)
            return .openBrowser(pending, listeningOn: addresses)
        case (.awaitingRedirect(let pending), .redirectReceived(let request)):
            let verdict = Self.judge(pending) { request }
            state = .answeringBrowser(verdict)
            return .answerBrowser(verdict.answer)
        case (.answeringBrowser(let verdict), .browserAnswered):
            return proceed(verdict)
        case (.awaitingRedirect(let pending), .redirectPasted(let text)):
            return proceed(Self.judge(pending) { try RedirectRequest(pastedURL: text) })
        case (.startingDevice(let provider, let metadata), .deviceAuthorizationStarted(let authorization)):
            state = .identifyingFirstFactor
            return .pollDeviceAuthorization(authorization, provider, metadata)
        case (.identifyingFirstFactor, .accountIdentified(let record)):
            if case .oauth = route, let refused = refusedIdentity(record) { return fail(refused) }
            if case .federated = route {
                state = .storing(record, isFirstFactor: true)
            } else {
                state = .storing(record, isFirstFactor: false)
            }
            return .store(record)
        case (.storing(let record, isFirstFactor: true), .stored):
            guard case .federated(let first, _, let firebase) = route else { return unexpected("stored") }
            guard let idToken = record.idToken else { return fail(SignInError.noIDToken(account: record.label)) }
            state = .announcingFederatedPass(idToken: idToken, firebase)
            return .notify(.federatedSignInPassed(first, firebase))
        case (.askingCredentials(let firebase), .credentialsEntered(let credentials)):
            guard let credentials else { return fail(SecondFactorError.cancelled) }
            return startSecondFactor(.password(email: credentials.email, password: credentials.password), firebase)
        case (.secondFactor(var resolver, let firebase), _):
            let step: SecondFactorResolver.Action
            switch event {
            case .firstFactorAnswered(let outcome): step = resolver.firstFactorFinished(outcome)
            case .hintChosen(let hint):
                guard let hint else { return fail(SecondFactorError.cancelled) }
                step = resolver.hintChosen(hint)
            case .codeSent(let session): step = resolver.verificationStarted(session)
            case .codeAnswered(.code(let code)): step = resolver.codeEntered(code)
            case .codeAnswered(.resend): step = resolver.resendRequested()
            case .codeAnswered(.cancel): return fail(SecondFactorError.cancelled)
            case .secondFactorPassed(let tokens): step = resolver.finalized(tokens)
            case .secondFactorFailed(let error): step = resolver.failed(error)
            default: return unexpected("event during the second factor")
            }
            state = .secondFactor(resolver, firebase)
            return secondFactorAction(step, firebase)
        case (.identifyingAccount, .accountIdentified(let record)):
            if let refused = refusedIdentity(record) { return fail(refused) }
            state = .storing(record, isFirstFactor: false)
            return .store(record)
        case (.storing(let record, isFirstFactor: false), .stored(let outcome)):
            state = .over
            return .finished(record, outcome)
        case (_, .secondFactorFailed(let error)):
            return fail(error)
        default:
            return unexpected("event")
        }
    }

    // MARK: - Steps

    private var oauthProvider: OAuthProvider? {
        switch route {
        case .oauth(let provider, _), .federated(let provider, _, _): return provider
        case .password: return nil
        }
    }

    private var mode: OAuthClient.RedirectMode {
        switch route {
        case .oauth(_, let mode), .federated(_, let mode, _): return mode
        case .password: return .loopback
        }
    }

    /// The hint for `provider`'s authorization request: only the provider signed in to (not a
    /// federated first factor, whose accounts are named differently).
    private func loginHint(for provider: OAuthProvider) -> String? {
        guard case .oauth = route else { return nil }
        return expected?.hint
    }

    /// The error when a re-sign-in came back as another account than the one asked for.
    private func refusedIdentity(_ record: AccountRecord) -> SignInError? {
        guard let expected, record.issuer != expected.issuer || record.subject != expected.subject else { return nil }
        return .differentAccount(expected: expected.hint, got: record.label)
    }

    private mutating func fetchMetadata(_ provider: OAuthProvider) -> Action {
        state = .fetchingMetadata(provider)
        return .fetchMetadata(provider)
    }

    /// A redirect checked against the pending request (path, Host, state, iss, error/code).
    enum Verdict: Sendable {
        case accepted(AuthorizationCode, PendingAuthorization)
        case refused(any Error)

        var answer: BrowserAnswer {
            if case .accepted = self { return .accepted }
            return .refused
        }
    }

    private static func judge(_ pending: PendingAuthorization, _ request: () throws -> RedirectRequest) -> Verdict {
        do {
            return .accepted(try pending.validate(try request()), pending)
        } catch {
            return .refused(error)
        }
    }

    /// An accepted code is exchanged; a refused response ends the sign-in with the reason.
    private mutating func proceed(_ verdict: Verdict) -> Action {
        switch verdict {
        case .accepted(let code, let pending):
            state = .identifyingFirstFactor
            return .exchange(code, pending)
        case .refused(let error):
            return fail(error)
        }
    }

    private mutating func startSecondFactor(_ factor: FirstFactor, _ firebase: FirebaseProvider) -> Action {
        state = .secondFactor(SecondFactorResolver(), firebase)
        return .submitFirstFactor(factor, firebase)
    }

    private mutating func secondFactorAction(_ step: SecondFactorResolver.Action, _ firebase: FirebaseProvider) -> Action {
        switch step {
        case .chooseHint(let hints): return .chooseHint(hints)
        case .startVerification(let hint, let pending, let notice): return .sendCode(hint, pending, notice: notice)
        case .askForCode(let session, let problem): return .askForCode(session, problem: problem)
        case .finalize(let session, let code, let pending): return .finalize(session, code: code, pending)
        case .signedIn(let tokens, let factor):
            state = .identifyingAccount
            return .identifyFirebaseAccount(tokens, factor: factor, firebase)
        case .fail(let error): return fail(error)
        }
    }

    private mutating func fail(_ error: any Error) -> Action {
        state = .over
        return .failed(error)
    }

    private mutating func unexpected(_ what: String) -> Action {
        fail(SecondFactorError.malformedResponse(backend: "the sign-in flow", reason: "\(what) arrived out of order"))
    }

    /// A port for the paste-mode redirect URI, from the dynamic range: nothing listens there, so
    /// the browser stops with the whole redirect URL in its address bar.
    static func pastePort() -> Int {
        Int.random(in: 49_152...65_535)
    }
}
