import Foundation
public import LatchkeyOAuth
public import LatchkeyProviders
public import LatchkeySecondFactor
public import LatchkeyVault

/// One sign-in, for every provider kind, as a pure state machine: events in, actions out.
///
/// The provider's kind decides the first factor (a browser redirect, a pasted redirect or a
/// device code for `oidc` and `oauth2`; email and password, or a whole OpenID sign-in whose ID
/// token is federated, for `firebase`), then a firebase sign-in may need a second factor
/// (`SecondFactorResolver`), then the account is stored. Enrolling a phone on a firebase account
/// is the same machine from "send a code" on. The machine performs nothing: the command line,
/// the screen and the tests drive it with `SignInRunner`, so every branch can be tested without
/// a browser, a listener or a network.
public struct SignInFlow: Sendable {
    /// What the driver does next; each is answered with one `Event`.
    public enum Action: Sendable {
        /// Read the keystore (unlocking it) before the person does any work. → `keystoreOpened`
        case openKeystore
        /// Find the OpenID provider whose sign-in is a firebase provider's first factor. → `firstFactorFound`
        case findFirstFactor(named: String, for: FirebaseProvider)
        /// Tell the person something that needs no answer. → `notified`
        case notify(Notice)
        /// Ask how to sign in, before listening on this machine's loopback interface. → `redirectModeChosen`
        case chooseRedirectMode(OAuthProvider)
        /// Discovery, or the file's endpoints. → `metadataFetched`
        case fetchMetadata(OAuthProvider)
        /// The client ID Latchkey registered at `provider` (RFC 7591): the vault's, or a new
        /// registration. → `clientRegistered`
        /// `forDevice`: the sign-in is a device sign-in, which needs a client registered for it.
        case registerClient(OAuthProvider, ServerMetadata, forDevice: Bool)
        /// Bind a loopback listener: on one of the provider's `loopback_port`s, or, for a client
        /// Latchkey registers itself, on the port it registered when that is free. → `listenerBound`
        case bindListener(OAuthProvider)
        /// Push the authorization request to the PAR endpoint (RFC 9126). → `authorizationRequestPushed`
        case pushAuthorizationRequest(PendingAuthorization)
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
        /// Send a code that proves `purpose` to `hint` (or prepare for a TOTP one). → `codeSent`
        case sendCode(SecondFactorHint, VerificationPurpose, notice: FirebaseAuthError?, FirebaseProvider)
        /// → `codeAnswered`
        case askForCode(VerificationSession, problem: FirebaseAuthError?)
        /// Prove `purpose` with the code. → `secondFactorPassed`
        case finalize(VerificationSession, code: Secret, VerificationPurpose, FirebaseProvider)
        /// Verify the firebase tokens and build the account (`previous`: the enrolling account,
        /// whose identity they must keep). → `accountIdentified`
        case identifyFirebaseAccount(SignInTokens, factor: SecondFactorHint?, FirebaseProvider, previous: AccountRecord?)
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
        case firstFactorFound(OAuthProvider)
        case notified
        /// `nil`: cancelled.
        case redirectModeChosen(OAuthClient.RedirectMode?)
        case metadataFetched(ServerMetadata)
        case clientRegistered(clientID: String, grantsDeviceCode: Bool)
        case listenerBound(port: Int, addresses: [String])
        /// The request, now standing for itself as a `request_uri`.
        case authorizationRequestPushed(PendingAuthorization)
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
        /// A firebase backend call failed; its `recovery` decides whether the flow goes on.
        case backendFailed(FirebaseAuthError)
        case stored(AccountService.SignInOutcome)
        /// Any other effect failed (network, time-out, cancelled): the sign-in ends.
        case effectFailed(any Error)
    }

    /// One browser, paste or device sign-in at an OAuth provider: the account signed in to, or
    /// the first factor of a firebase sign-in.
    struct OAuthLeg: Sendable {
        var provider: OAuthProvider
        var mode: OAuthClient.RedirectMode
        /// The firebase provider this sign-in is the first factor of; `nil` when its account is the one signed in to.
        var firstFactorOf: FirebaseProvider?
    }

    enum State: Sendable {
        case start
        case openingKeystore
        case findingFirstFactor(FirebaseProvider)
        case announcingFederatedStart(OAuthLeg)
        case choosingRedirectMode(OAuthLeg)
        case fetchingMetadata(OAuthLeg)
        case binding(OAuthLeg, ServerMetadata)
        /// The request is being pushed; then to the browser listening on `addresses`, or pasted when `nil`.
        case pushing(OAuthLeg, listeningOn: [String]?)
        case awaitingRedirect(OAuthLeg, PendingAuthorization)
        /// The redirect is judged; the browser is told before the verdict is acted on.
        case answeringBrowser(OAuthLeg, Verdict)
        case startingDevice(OAuthLeg, ServerMetadata)
        /// Listening first, so that the client Latchkey registers names the very port: servers
        /// such as the MCP SDK's match a redirect URI port and all, RFC 8252 §7.3 notwithstanding.
        case bindingToRegister(OAuthLeg, ServerMetadata)
        /// Registering Latchkey at the server, or finding the client it registered (RFC 7591);
        /// `bound` is the listener's port and addresses when it was bound for the registration.
        case registering(OAuthLeg, ServerMetadata, bound: (port: Int, addresses: [String])?)
        case identifyingOAuthAccount(OAuthLeg)
        /// The account of a federated sign-in's first factor is stored before its ID token goes on.
        case storingFirstFactor(AccountRecord, OAuthLeg, FirebaseProvider)
        /// The ID token of the first factor's account goes to the firebase provider once the person was told.
        case announcingFederatedPass(idToken: Secret, OAuthProvider, FirebaseProvider)
        case askingCredentials(FirebaseProvider)
        case secondFactor(SecondFactorResolver, FirebaseProvider)
        case identifyingFirebaseAccount
        case storing(AccountRecord)
        case over
    }

    /// What the flow ends in.
    enum Goal: Sendable {
        /// An account of `provider`, added or signed in again.
        case signIn(Provider)
        /// `enrollment`'s phone enrolled on `account` of the firebase provider.
        case enrollment(PhoneEnrollment, account: AccountRecord, FirebaseProvider)
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

    let goal: Goal
    /// The redirect mode asked for (`--paste`, `--device`, p or d on the screen); `nil` for the
    /// provider's own. For a federated firebase provider it applies to the first factor's sign-in.
    public let mode: OAuthClient.RedirectMode?
    public let expected: ExpectedAccount?
    /// `--acr` and `--max-age`, at the provider signed in to (not at a federated first factor).
    public let stepUp: StepUp
    private(set) var state: State = .start

    /// A sign-in at `provider`.
    public init(provider: Provider, mode: OAuthClient.RedirectMode? = nil, expected: ExpectedAccount? = nil, stepUp: StepUp = StepUp()) {
        goal = .signIn(provider)
        self.mode = mode
        self.expected = expected
        self.stepUp = stepUp
    }

    /// Enrolling `enrollment`'s phone on `account`, a signed-in account of the firebase `provider`.
    public init(enrolling enrollment: PhoneEnrollment, on account: AccountRecord, at provider: FirebaseProvider) {
        goal = .enrollment(enrollment, account: account, provider)
        mode = nil
        expected = ExpectedAccount(account)
        stepUp = StepUp()
    }

    // MARK: - Events

    /// The first action.
    public mutating func start() -> Action {
        guard case .start = state else { return outOfOrder("start") }
        guard case .signIn(let provider) = goal else { return startEnrollment() }
        switch provider.kind {
        case .oidc(let client), .oauth2(let client):
            if let missing = Self.missingClientID(OAuthProvider(provider, client: client)) { return fail(missing) }
        case .firebase:
            break
        }
        state = .openingKeystore
        return .openKeystore
    }

    public mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (_, .effectFailed(let error)):
            return fail(error)
        case (.openingKeystore, .keystoreOpened):
            guard case .signIn(let provider) = goal else { return outOfOrder("an opened keystore") }
            switch provider.kind {
            case .oidc(let client), .oauth2(let client):
                return beginOAuth(OAuthLeg(provider: OAuthProvider(provider, client: client), mode: mode ?? client.redirectMode))
            case .firebase(let settings):
                let firebase = FirebaseProvider(provider, settings: settings)
                switch settings.firstFactor {
                case .password:
                    state = .askingCredentials(firebase)
                    return .askForCredentials(firebase)
                case .provider(let name):
                    state = .findingFirstFactor(firebase)
                    return .findFirstFactor(named: name, for: firebase)
                }
            }
        case (.findingFirstFactor(let firebase), .firstFactorFound(let first)):
            if let missing = Self.missingClientID(first) { return fail(missing) }
            let leg = OAuthLeg(provider: first, mode: mode ?? first.redirectMode, firstFactorOf: firebase)
            state = .announcingFederatedStart(leg)
            return .notify(.federatedSignInStarted(first, firebase))
        case (.announcingFederatedStart(let leg), .notified):
            return beginOAuth(leg)
        case (.choosingRedirectMode(var leg), .redirectModeChosen(let chosen)):
            guard let chosen else { return fail(SignInError.cancelled) }
            leg.mode = chosen
            return fetchMetadata(leg)
        case (.announcingFederatedPass(let idToken, let first, let firebase), .notified):
            return startSecondFactor(.federated(providerID: first.firebaseProviderID, idToken: idToken), firebase)
        case (.fetchingMetadata(let leg), .metadataFetched(let metadata)):
            guard leg.provider.choices.registration != .dynamic else {
                if leg.mode == .loopback && leg.provider.loopbackPorts.isEmpty {
                    state = .bindingToRegister(leg, metadata)
                    return .bindListener(leg.provider)
                }
                state = .registering(leg, metadata, bound: nil)
                return .registerClient(leg.provider, metadata, forDevice: leg.mode == .device)
            }
            return signIn(leg, metadata)
        case (.bindingToRegister(var leg, let metadata), .listenerBound(let port, let addresses)):
            // The registration lists this port's redirect URI alone.
            leg.provider.client.loopbackPorts = [port]
            state = .registering(leg, metadata, bound: (port, addresses))
            return .registerClient(leg.provider, metadata, forDevice: false)
        case (.registering(var leg, let metadata, let bound), .clientRegistered(let clientID, let grantsDeviceCode)):
            if leg.mode == .device && !grantsDeviceCode {
                return fail(ClientRegistrationError.deviceNotRegistered(provider: leg.provider.name))
            }
            leg.provider.client.clientID = clientID
            guard let bound else { return signIn(leg, metadata) }
            return authorize(leg, metadata, redirectURI: leg.provider.redirectURI(port: bound.port), listeningOn: bound.addresses)
        case (.binding(let leg, let metadata), .listenerBound(let port, let addresses)):
            return authorize(leg, metadata, redirectURI: leg.provider.redirectURI(port: port), listeningOn: addresses)
        case (.pushing(let leg, let addresses), .authorizationRequestPushed(let pending)):
            return sendToBrowser(leg, pending, listeningOn: addresses)
        case (.awaitingRedirect(let leg, let pending), .redirectReceived(let request)):
            let verdict = Self.judge(pending) { request }
            state = .answeringBrowser(leg, verdict)
            return .answerBrowser(verdict.answer)
        case (.answeringBrowser(let leg, let verdict), .browserAnswered):
            return proceed(leg, verdict)
        case (.awaitingRedirect(let leg, let pending), .redirectPasted(let text)):
            return proceed(leg, Self.judge(pending) { try RedirectRequest(pastedURL: text) })
        case (.startingDevice(let leg, let metadata), .deviceAuthorizationStarted(let authorization)):
            state = .identifyingOAuthAccount(leg)
            return .pollDeviceAuthorization(authorization, leg.provider, metadata)
        case (.identifyingOAuthAccount(let leg), .accountIdentified(let record)):
            guard let firebase = leg.firstFactorOf else { return store(record) }
            state = .storingFirstFactor(record, leg, firebase)
            return .store(record)
        case (.storingFirstFactor(let record, let leg, let firebase), .stored):
            guard let idToken = record.idToken else { return fail(SignInError.noIDToken(account: record.label)) }
            state = .announcingFederatedPass(idToken: idToken, leg.provider, firebase)
            return .notify(.federatedSignInPassed(leg.provider, firebase))
        case (.askingCredentials(let firebase), .credentialsEntered(let credentials)):
            guard let credentials else { return fail(SignInError.cancelled) }
            return startSecondFactor(.password(email: credentials.email, password: credentials.password), firebase)
        case (.secondFactor(var resolver, let firebase), _):
            let step: SecondFactorResolver.Action
            switch event {
            case .firstFactorAnswered(let outcome): step = resolver.firstFactorFinished(outcome)
            case .hintChosen(let hint):
                guard let hint else { return fail(SignInError.cancelled) }
                step = resolver.hintChosen(hint)
            case .codeSent(let session): step = resolver.verificationStarted(session)
            case .codeAnswered(.code(let code)): step = resolver.codeEntered(code)
            case .codeAnswered(.resend): step = resolver.resendRequested()
            case .codeAnswered(.cancel): return fail(SignInError.cancelled)
            case .secondFactorPassed(let tokens): step = resolver.finalized(tokens)
            case .backendFailed(let error): step = resolver.failed(error)
            default: return outOfOrder("an event during the second factor")
            }
            state = .secondFactor(resolver, firebase)
            return secondFactorAction(step, firebase)
        case (.identifyingFirebaseAccount, .accountIdentified(let record)):
            return store(record)
        case (.storing(let record), .stored(let outcome)):
            state = .over
            return .finished(record, outcome)
        case (_, .backendFailed(let error)):
            return fail(error)
        default:
            return outOfOrder("an event")
        }
    }

    // MARK: - Steps

    /// The sign-in proper, once the server's metadata (and any registered client) is known.
    private mutating func signIn(_ leg: OAuthLeg, _ metadata: ServerMetadata) -> Action {
        switch leg.mode {
        case .loopback:
            state = .binding(leg, metadata)
            return .bindListener(leg.provider)
        case .paste:
            // No listener: the port (a registered one, if the provider demands one) is only a
            // placeholder the browser fails to reach, leaving the whole redirect URL in its
            // address bar for the person to copy.
            return authorize(
                leg, metadata, redirectURI: leg.provider.redirectURI(port: leg.provider.loopbackPorts.first ?? Self.pastePort()),
                listeningOn: nil)
        case .device:
            state = .startingDevice(leg, metadata)
            return .startDeviceAuthorization(leg.provider, metadata)
        }
    }

    /// `client_id` is checked before the person does any work.
    private static func missingClientID(_ provider: OAuthProvider) -> SignInError? {
        provider.clientID.isEmpty && provider.choices.registration != .dynamic
            ? .missingClientID(provider: provider.name, file: provider.sourceFile) : nil
    }

    /// The hint for the authorization request: only at the provider signed in to (not at a
    /// federated first factor, whose accounts are named differently).
    private func loginHint(for leg: OAuthLeg) -> String? {
        leg.firstFactorOf == nil ? expected?.hint : nil
    }

    /// Stores the account signed in to, unless a re-sign-in came back as another account.
    private mutating func store(_ record: AccountRecord) -> Action {
        if let expected, record.issuer != expected.issuer || record.subject != expected.subject {
            return fail(SignInError.differentAccount(expected: expected.hint, got: record.label))
        }
        state = .storing(record)
        return .store(record)
    }

    /// A browser sign-in in the provider's own loopback mode first asks whether the person is
    /// here to use a browser; a mode asked for explicitly is not asked again.
    private mutating func beginOAuth(_ leg: OAuthLeg) -> Action {
        guard mode == nil, leg.mode == .loopback else { return fetchMetadata(leg) }
        state = .choosingRedirectMode(leg)
        return .chooseRedirectMode(leg.provider)
    }

    /// The authorization request for `leg`, pushed first when the provider uses PAR, bound to a
    /// new DPoP key when it uses DPoP; then the browser (`addresses`) or the paste prompt (`nil`).
    private mutating func authorize(_ leg: OAuthLeg, _ metadata: ServerMetadata, redirectURI: String, listeningOn addresses: [String]?)
        -> Action
    {
        let choices = leg.provider.choices
        let pending: PendingAuthorization
        let pushes: Bool
        do {
            pushes = try choices.pushesAuthorization(metadata, provider: leg.provider.name)
            let key = try choices.bindsTokens(metadata, provider: leg.provider.name) ? DPoPKey() : nil
            pending = PendingAuthorization(
                provider: leg.provider, metadata: metadata, redirectURI: redirectURI, loginHint: loginHint(for: leg),
                dpopKey: key, stepUp: leg.firstFactorOf == nil ? stepUp : StepUp())
        } catch {
            return fail(error)
        }
        guard pushes else { return sendToBrowser(leg, pending, listeningOn: addresses) }
        state = .pushing(leg, listeningOn: addresses)
        return .pushAuthorizationRequest(pending)
    }

    private mutating func sendToBrowser(_ leg: OAuthLeg, _ pending: PendingAuthorization, listeningOn addresses: [String]?) -> Action {
        state = .awaitingRedirect(leg, pending)
        guard let addresses else { return .askForPastedRedirect(pending) }
        return .openBrowser(pending, listeningOn: addresses)
    }

    private mutating func fetchMetadata(_ leg: OAuthLeg) -> Action {
        state = .fetchingMetadata(leg)
        return .fetchMetadata(leg.provider)
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
    private mutating func proceed(_ leg: OAuthLeg, _ verdict: Verdict) -> Action {
        switch verdict {
        case .accepted(let code, let pending):
            state = .identifyingOAuthAccount(leg)
            return .exchange(code, pending)
        case .refused(let error):
            return fail(error)
        }
    }

    private mutating func startSecondFactor(_ factor: FirstFactor, _ firebase: FirebaseProvider) -> Action {
        state = .secondFactor(SecondFactorResolver(), firebase)
        return .submitFirstFactor(factor, firebase)
    }

    /// An enrollment starts by sending a code to the new phone.
    private mutating func startEnrollment() -> Action {
        guard case .enrollment(let enrollment, _, let firebase) = goal else { return outOfOrder("start") }
        let hint = SecondFactorHint(
            id: "", kind: .phone, displayName: enrollment.displayName, phoneNumber: PhoneNumberMask.maskedIfFull(enrollment.phoneNumber))
        let (resolver, step) = SecondFactorResolver.enrolling(enrollment, as: hint)
        state = .secondFactor(resolver, firebase)
        return secondFactorAction(step, firebase)
    }

    private mutating func secondFactorAction(_ step: SecondFactorResolver.Action, _ firebase: FirebaseProvider) -> Action {
        switch step {
        case .chooseHint(let hints): return .chooseHint(hints)
        case .startVerification(let hint, let purpose, let notice): return .sendCode(hint, purpose, notice: notice, firebase)
        case .askForCode(let session, let problem): return .askForCode(session, problem: problem)
        case .finalize(let session, let code, let purpose): return .finalize(session, code: code, purpose, firebase)
        case .verified(let tokens, let factor):
            state = .identifyingFirebaseAccount
            var previous: AccountRecord?
            if case .enrollment(_, let account, _) = goal { previous = account }
            return .identifyFirebaseAccount(tokens, factor: factor, firebase, previous: previous)
        case .fail(let error): return fail(error)
        case .outOfOrder(let what): return outOfOrder(what)
        }
    }

    private mutating func fail(_ error: any Error) -> Action {
        state = .over
        return .failed(error)
    }

    /// A driver that answers an action with the wrong event: Latchkey's own bug, said as one.
    private mutating func outOfOrder(_ what: String) -> Action {
        fail(SignInError.outOfOrder(what))
    }

    /// A port for the paste-mode redirect URI, from the dynamic range: nothing listens there, so
    /// the browser stops with the whole redirect URL in its address bar.
    static func pastePort() -> Int {
        Int.random(in: 49_152...65_535)
    }
}
