import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// `SignInFlow` as the pure state machine it is: events in, actions out, for every first-factor
/// route and every second-factor branch.
@Suite("The sign-in state machine")
struct SignInFlowStateTests {
    static let settings = FirebaseSettings(apiKey: "k", projectID: "demo")
    static let firebaseProvider = Provider.firebaseTesting(name: "fb", settings: settings)
    static let firebase = FirebaseProvider.testing(name: "fb", settings: settings)
    static let work = SecondFactorHint(id: "work", kind: .phone, displayName: "Work phone", phoneNumber: "+*******1234")
    static let pending = PendingCredential(Secret("pending"))
    static let tokens = SignInTokens(idToken: Secret("id"), refreshToken: Secret("refresh"), expiresIn: 3600)
    static let record = AccountRecord(
        provider: "fb", issuer: "https://securetoken.google.com/demo", subject: "uid", displayName: nil, accessToken: Secret("id"),
        tokenType: "Bearer", refreshToken: nil, idToken: Secret("id"), expiresAt: nil, scopes: [], createdAt: Date(), updatedAt: Date())

    /// A password flow that has reached the code prompt for the work phone.
    func atCodePrompt() throws -> (SignInFlow, VerificationSession) {
        var flow = SignInFlow(provider: Self.firebaseProvider)
        guard case .openKeystore = flow.start() else { throw Failure("no keystore first") }
        guard case .askForCredentials = flow.handle(.keystoreOpened) else { throw Failure("no credentials asked") }
        guard
            case .submitFirstFactor(.password("ada@demo.test", _), _) = flow.handle(
                .credentialsEntered(.init(email: "ada@demo.test", password: Secret("pw"))))
        else { throw Failure("no first factor") }
        guard
            case .chooseHint([Self.work]) = flow.handle(
                .firstFactorAnswered(.secondFactorRequired(hints: [Self.work], pending: Self.pending)))
        else { throw Failure("no hints") }
        guard case .sendCode(Self.work, .signIn(Self.pending), nil, Self.firebase) = flow.handle(.hintChosen(Self.work)) else {
            throw Failure("no code sent")
        }
        let session = VerificationSession(sessionInfo: Secret("s1"), hint: Self.work)
        guard case .askForCode(session, nil) = flow.handle(.codeSent(session)) else { throw Failure("no code asked") }
        return (flow, session)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test("a wrong code asks again with the problem; a right one finishes, identifies and stores")
    func wrongThenRightCode() throws {
        var (flow, session) = try atCodePrompt()
        guard case .finalize(session, let code, .signIn(Self.pending), Self.firebase) = flow.handle(.codeAnswered(.code(Secret(" 12 34 "))))
        else {
            throw Failure("no finalize")
        }
        #expect(code == Secret("1234"))
        guard case .askForCode(session, .wrongCode?) = flow.handle(.backendFailed(.wrongCode)) else {
            throw Failure("a wrong code did not ask again")
        }
        guard case .finalize = flow.handle(.codeAnswered(.code(Secret("4321")))) else { throw Failure("no second finalize") }
        guard case .identifyFirebaseAccount(Self.tokens, Self.work, Self.firebase, nil) = flow.handle(.secondFactorPassed(Self.tokens))
        else {
            throw Failure("not identified")
        }
        guard case .store(Self.record) = flow.handle(.accountIdentified(Self.record)) else { throw Failure("not stored") }
        guard case .finished(Self.record, .added) = flow.handle(.stored(.added)) else { throw Failure("not finished") }
    }

    @Test("an expired code sends a new one with a notice; resend asks for a new one without")
    func expiredAndResend() throws {
        var (flow, session) = try atCodePrompt()
        _ = flow.handle(.codeAnswered(.code(Secret("1"))))
        guard case .sendCode(Self.work, _, .codeExpired?, _) = flow.handle(.backendFailed(.codeExpired(code: "SESSION_EXPIRED"))) else {
            throw Failure("no automatic resend")
        }
        _ = flow.handle(.codeSent(session))
        guard case .sendCode(Self.work, _, nil, _) = flow.handle(.codeAnswered(.resend)) else { throw Failure("resend ignored") }
    }

    @Test("cancelling at the hint, the code or the credentials ends the flow as cancelled")
    func cancels() throws {
        var (flow, _) = try atCodePrompt()
        guard case .failed(let error) = flow.handle(.codeAnswered(.cancel)) else { throw Failure("not cancelled") }
        #expect(error as? SignInError == .cancelled)
        var credentials = SignInFlow(provider: Self.firebaseProvider)
        _ = credentials.start()
        _ = credentials.handle(.keystoreOpened)
        guard case .failed = credentials.handle(.credentialsEntered(nil)) else { throw Failure("credentials not cancelled") }
    }

    @Test("an account with no second factor is signed in by the first factor alone")
    func noSecondFactor() throws {
        var flow = SignInFlow(provider: Self.firebaseProvider)
        _ = flow.start()
        _ = flow.handle(.keystoreOpened)
        _ = flow.handle(.credentialsEntered(.init(email: "a@b.c", password: Secret("pw"))))
        guard case .identifyFirebaseAccount(Self.tokens, nil, _, nil) = flow.handle(.firstFactorAnswered(.signedIn(Self.tokens))) else {
            throw Failure("not identified")
        }
    }

    @Test("too many attempts ends the flow with the error that says to wait")
    func tooManyAttempts() throws {
        var (flow, _) = try atCodePrompt()
        _ = flow.handle(.codeAnswered(.code(Secret("1"))))
        guard case .failed(let error) = flow.handle(.backendFailed(.tooManyAttempts)) else { throw Failure("went on") }
        #expect((error as? FirebaseAuthError)?.recovery == .wait)
    }

    @Test("a federated sign-in stores the first factor's account, then sends its ID token to the firebase provider")
    func federated() throws {
        let corp = OAuthProvider.testing(name: "corp")
        let federated = FirebaseSettings(apiKey: "k", projectID: "demo", firstFactor: .provider("corp"))
        let firebase = FirebaseProvider.testing(name: "fb", settings: federated)
        var flow = SignInFlow(provider: Provider.firebaseTesting(name: "fb", settings: federated))
        _ = flow.start()
        guard case .findFirstFactor(named: "corp", for: firebase) = flow.handle(.keystoreOpened) else { throw Failure("no lookup") }
        guard case .notify(.federatedSignInStarted(corp, firebase)) = flow.handle(.firstFactorFound(corp)) else {
            throw Failure("no notice")
        }
        guard case .chooseRedirectMode(corp) = flow.handle(.notified) else { throw Failure("no question about the browser") }
        guard case .fetchMetadata(corp) = flow.handle(.redirectModeChosen(.loopback)) else { throw Failure("no metadata") }
        let metadata = ServerMetadata(
            issuer: corp.issuer, authorizationEndpoint: URL(string: "https://idp.example.com/authorize")!,
            tokenEndpoint: URL(string: "https://idp.example.com/token")!, jwksURI: URL(string: "https://idp.example.com/jwks"))
        guard case .bindListener(corp) = flow.handle(.metadataFetched(metadata)) else { throw Failure("no listener") }
        guard case .openBrowser(let pending, ["127.0.0.1:5000"]) = flow.handle(.listenerBound(port: 5000, addresses: ["127.0.0.1:5000"]))
        else {
            throw Failure("no browser")
        }
        #expect(pending.redirectURI == "http://127.0.0.1:5000/oauth2redirect/corp")
        let request = RedirectRequest(
            target: "/oauth2redirect/corp?code=c&state=\(pending.state.exposedValue)", host: "127.0.0.1:5000")
        guard case .answerBrowser(.accepted) = flow.handle(.redirectReceived(request)) else { throw Failure("browser not answered") }
        guard case .exchange(let code, let exchanged) = flow.handle(.browserAnswered) else { throw Failure("no exchange") }
        #expect(code.value == Secret("c"))
        #expect(exchanged.loginHint == nil, "a federated first factor's accounts are named differently: no login_hint")
        var first = Self.record
        first.provider = "corp"
        first.idToken = Secret("corp-id-token")
        guard case .store(first) = flow.handle(.accountIdentified(first)) else { throw Failure("first factor not stored") }
        guard case .notify(.federatedSignInPassed) = flow.handle(.stored(.added)) else { throw Failure("no pass notice") }
        guard
            case .submitFirstFactor(.federated(providerID: "oidc.corp", idToken: Secret("corp-id-token")), firebase) = flow.handle(
                .notified)
        else { throw Failure("ID token not federated") }
    }

    @Test("a refused redirect is answered as refused, then the sign-in fails with the reason and exchanges nothing")
    func refusedRedirect() throws {
        let corp = Provider.testing(name: "corp")
        var flow = SignInFlow(provider: corp, mode: .loopback)
        _ = flow.start()
        _ = flow.handle(.keystoreOpened)
        let metadata = ServerMetadata(
            issuer: corp.asOAuth.issuer, authorizationEndpoint: URL(string: "https://idp.example.com/authorize")!,
            tokenEndpoint: URL(string: "https://idp.example.com/token")!, jwksURI: URL(string: "https://idp.example.com/jwks"))
        guard case .bindListener = flow.handle(.metadataFetched(metadata)) else { throw Failure("no listener") }
        guard case .openBrowser = flow.handle(.listenerBound(port: 5000, addresses: ["127.0.0.1:5000"])) else {
            throw Failure("no browser")
        }
        let forged = RedirectRequest(target: "/oauth2redirect/corp?code=c&state=not-ours", host: "127.0.0.1:5000")
        guard case .answerBrowser(.refused) = flow.handle(.redirectReceived(forged)) else { throw Failure("browser not told") }
        guard case .failed(let error) = flow.handle(.browserAnswered) else { throw Failure("went on") }
        #expect(error as? AuthorizationResponseError == .stateMismatch)
    }

    @Test("a provider without client_id fails before anything runs")
    func refusesAMissingClientID() throws {
        let corp = Provider.testing(name: "corp")
        guard case .oidc(var client) = corp.kind else { throw Failure("not oidc") }
        client.clientID = ""
        var flow = SignInFlow(provider: Provider(name: "corp", displayName: "Corp", kind: .oidc(client), sourceFile: corp.sourceFile))
        guard case .failed(let error) = flow.start() else { throw Failure("started without a client") }
        #expect(error as? SignInError == .missingClientID(provider: "corp", file: "/etc/latchkey/providers.d/corp.toml"))
    }

    @Test("an event out of order fails the flow as Latchkey's own bug, not as the server's fault")
    func outOfOrderIsLatchkeysBug() throws {
        var flow = SignInFlow(provider: Self.firebaseProvider)
        _ = flow.start()
        guard case .failed(let error) = flow.handle(.codeSent(VerificationSession(sessionInfo: nil, hint: Self.work))) else {
            throw Failure("accepted an event out of order")
        }
        let refusal = try #require(error as? SignInError)
        #expect(refusal.category == .unexpected)
        #expect(refusal.description.contains("bug in Latchkey"))
    }

    @Test("a browser sign-in asks how to sign in first, and goes the way the person chose; an asked-for mode is not asked again")
    func redirectModeChoice() throws {
        let corp = Provider.testing(name: "corp")
        var flow = SignInFlow(provider: corp)
        _ = flow.start()
        guard case .chooseRedirectMode(corp.asOAuth) = flow.handle(.keystoreOpened) else { throw Failure("not asked") }
        guard case .fetchMetadata = flow.handle(.redirectModeChosen(.device)) else { throw Failure("no metadata") }
        let metadata = ServerMetadata(
            issuer: "https://idp.example.com", authorizationEndpoint: URL(string: "https://idp.example.com/authorize")!,
            tokenEndpoint: URL(string: "https://idp.example.com/token")!, jwksURI: URL(string: "https://idp.example.com/jwks"))
        guard case .startDeviceAuthorization = flow.handle(.metadataFetched(metadata)) else { throw Failure("not the device grant") }

        var cancelled = SignInFlow(provider: corp)
        _ = cancelled.start()
        _ = cancelled.handle(.keystoreOpened)
        guard case .failed(let error) = cancelled.handle(.redirectModeChosen(nil)) else { throw Failure("went on") }
        #expect(error as? SignInError == .cancelled)

        var pasting = SignInFlow(provider: corp, mode: .paste)
        _ = pasting.start()
        guard case .fetchMetadata = pasting.handle(.keystoreOpened) else { throw Failure("--paste asked again") }
    }

    @Test("enrolling a phone sends a code to it, re-sends an expired one at most three times, and keeps the account's identity")
    func enrollment() throws {
        let account = Self.record
        let enrollment = PhoneEnrollment(phoneNumber: "+15555550100", displayName: "Desk", idToken: Secret("id"))
        var flow = SignInFlow(enrolling: enrollment, on: account, at: Self.firebase)
        guard case .sendCode(let hint, .enrollment(enrollment), nil, Self.firebase) = flow.start() else { throw Failure("no code sent") }
        #expect(hint.phoneNumber == "+*******0100" && hint.displayName == "Desk")
        let session = VerificationSession(sessionInfo: Secret("s"), hint: hint)
        var resends = 0
        var action = flow.handle(.codeSent(session))
        while true {
            guard case .askForCode = action else { throw Failure("no code asked") }
            guard case .finalize(_, _, .enrollment(enrollment), _) = flow.handle(.codeAnswered(.code(Secret("123456")))) else {
                throw Failure("no finalize")
            }
            action = flow.handle(.backendFailed(.codeExpired(code: "SESSION_EXPIRED")))
            guard case .sendCode = action else { break }
            resends += 1
            action = flow.handle(.codeSent(session))
        }
        #expect(resends == SecondFactorResolver.maximumAutomaticResends)
        guard case .failed(let error) = action else { throw Failure("did not stop") }
        #expect(error as? FirebaseAuthError == .codeExpired(code: "SESSION_EXPIRED"))

        var done = SignInFlow(enrolling: enrollment, on: account, at: Self.firebase)
        _ = done.start()
        _ = done.handle(.codeSent(session))
        _ = done.handle(.codeAnswered(.code(Secret("123456"))))
        guard case .identifyFirebaseAccount(Self.tokens, hint, Self.firebase, account) = done.handle(.secondFactorPassed(Self.tokens))
        else {
            throw Failure("the enrolled tokens are not checked against the account")
        }
        var someoneElse = account
        someoneElse.subject = "another-uid"
        guard case .failed(let error) = done.handle(.accountIdentified(someoneElse)) else { throw Failure("stored another account") }
        #expect(error as? SignInError == .differentAccount(expected: "uid", got: "another-uid"))
    }
}
