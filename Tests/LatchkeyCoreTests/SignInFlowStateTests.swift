import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCore
@testable import LatchkeyVault

/// `SignInFlow` as the pure state machine it is: events in, actions out, for every first-factor
/// route and every second-factor branch.
@Suite("The sign-in state machine")
struct SignInFlowStateTests {
    static let firebase = FirebaseProvider(
        name: "fb", displayName: "Emulated", sourceFile: "/fb.toml", settings: FirebaseSettings(apiKey: "k", projectID: "demo"))
    static let work = SecondFactorHint(id: "work", kind: .phone, displayName: "Work phone", phoneNumber: "+*******1234")
    static let pending = PendingCredential(Secret("pending"))
    static let tokens = SignInTokens(idToken: Secret("id"), refreshToken: Secret("refresh"), expiresIn: 3600)
    static let record = AccountRecord(
        provider: "fb", issuer: "https://securetoken.google.com/demo", subject: "uid", displayName: nil, accessToken: Secret("id"),
        tokenType: "Bearer", refreshToken: nil, idToken: Secret("id"), expiresAt: nil, scopes: [], createdAt: Date(), updatedAt: Date())

    /// A password flow that has reached the code prompt for the work phone.
    func atCodePrompt() throws -> (SignInFlow, VerificationSession) {
        var flow = SignInFlow(route: .password(Self.firebase))
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
        guard case .sendCode(Self.work, Self.pending, nil) = flow.handle(.hintChosen(Self.work)) else { throw Failure("no code sent") }
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
        guard case .finalize(session, let code, Self.pending) = flow.handle(.codeAnswered(.code(Secret(" 12 34 ")))) else {
            throw Failure("no finalize")
        }
        #expect(code == Secret("1234"))
        guard case .askForCode(session, .wrongCode?) = flow.handle(.secondFactorFailed(.wrongCode)) else {
            throw Failure("a wrong code did not ask again")
        }
        guard case .finalize = flow.handle(.codeAnswered(.code(Secret("4321")))) else { throw Failure("no second finalize") }
        guard case .identifyFirebaseAccount(Self.tokens, Self.work, Self.firebase) = flow.handle(.secondFactorPassed(Self.tokens)) else {
            throw Failure("not identified")
        }
        guard case .store(Self.record) = flow.handle(.accountIdentified(Self.record)) else { throw Failure("not stored") }
        guard case .finished(Self.record, .added) = flow.handle(.stored(.added)) else { throw Failure("not finished") }
    }

    @Test("an expired code sends a new one with a notice; resend asks for a new one without")
    func expiredAndResend() throws {
        var (flow, session) = try atCodePrompt()
        _ = flow.handle(.codeAnswered(.code(Secret("1"))))
        guard case .sendCode(Self.work, _, .codeExpired?) = flow.handle(.secondFactorFailed(.codeExpired(code: "SESSION_EXPIRED"))) else {
            throw Failure("no automatic resend")
        }
        _ = flow.handle(.codeSent(session))
        guard case .sendCode(Self.work, _, nil) = flow.handle(.codeAnswered(.resend)) else { throw Failure("resend ignored") }
    }

    @Test("cancelling at the hint, the code or the credentials ends the flow as cancelled")
    func cancels() throws {
        var (flow, _) = try atCodePrompt()
        guard case .failed(let error) = flow.handle(.codeAnswered(.cancel)) else { throw Failure("not cancelled") }
        #expect(error as? SecondFactorError == .cancelled)
        var credentials = SignInFlow(route: .password(Self.firebase))
        _ = credentials.start()
        _ = credentials.handle(.keystoreOpened)
        guard case .failed = credentials.handle(.credentialsEntered(nil)) else { throw Failure("credentials not cancelled") }
    }

    @Test("an account with no second factor is signed in by the first factor alone")
    func noSecondFactor() throws {
        var flow = SignInFlow(route: .password(Self.firebase))
        _ = flow.start()
        _ = flow.handle(.keystoreOpened)
        _ = flow.handle(.credentialsEntered(.init(email: "a@b.c", password: Secret("pw"))))
        guard case .identifyFirebaseAccount(Self.tokens, nil, _) = flow.handle(.firstFactorAnswered(.signedIn(Self.tokens))) else {
            throw Failure("not identified")
        }
    }

    @Test("too many attempts ends the flow with the error that says to wait")
    func tooManyAttempts() throws {
        var (flow, _) = try atCodePrompt()
        _ = flow.handle(.codeAnswered(.code(Secret("1"))))
        guard case .failed(let error) = flow.handle(.secondFactorFailed(.tooManyAttempts)) else { throw Failure("went on") }
        #expect((error as? SecondFactorError)?.recovery == .wait)
    }

    @Test("a federated sign-in stores the first factor's account, then sends its ID token to the firebase provider")
    func federated() throws {
        let corp = OAuthProvider.testing(name: "corp")
        var flow = SignInFlow(route: .federated(firstFactor: corp, mode: .loopback, into: Self.firebase))
        _ = flow.start()
        guard case .notify(.federatedSignInStarted(corp, Self.firebase)) = flow.handle(.keystoreOpened) else { throw Failure("no notice") }
        guard case .fetchMetadata(corp) = flow.handle(.notified) else { throw Failure("no metadata") }
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
        guard case .exchange(let code, _) = flow.handle(.browserAnswered) else { throw Failure("no exchange") }
        #expect(code.value == Secret("c"))
        var first = Self.record
        first.provider = "corp"
        first.idToken = Secret("corp-id-token")
        guard case .store(first) = flow.handle(.accountIdentified(first)) else { throw Failure("first factor not stored") }
        guard case .notify(.federatedSignInPassed) = flow.handle(.stored(.added)) else { throw Failure("no pass notice") }
        guard
            case .submitFirstFactor(.federated(providerID: "oidc.corp", idToken: Secret("corp-id-token")), Self.firebase) = flow.handle(
                .notified)
        else { throw Failure("ID token not federated") }
    }

    @Test("a refused redirect is answered as refused, then the sign-in fails with the reason and exchanges nothing")
    func refusedRedirect() throws {
        let corp = OAuthProvider.testing(name: "corp")
        var flow = SignInFlow(route: .oauth(corp, mode: .loopback))
        _ = flow.start()
        _ = flow.handle(.keystoreOpened)
        let metadata = ServerMetadata(
            issuer: corp.issuer, authorizationEndpoint: URL(string: "https://idp.example.com/authorize")!,
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

    @Test("a provider without client_id fails before anything runs; an event out of order fails the flow")
    func refusals() throws {
        var noClient = OAuthProvider.testing(name: "corp")
        noClient.client.clientID = ""
        var flow = SignInFlow(route: .oauth(noClient, mode: .loopback))
        guard case .failed(let error) = flow.start() else { throw Failure("started without a client") }
        #expect(error as? SignInError == .missingClientID(provider: "corp", file: "/etc/latchkey/providers.d/corp.toml"))
        var outOfOrder = SignInFlow(route: .password(Self.firebase))
        _ = outOfOrder.start()
        guard case .failed = outOfOrder.handle(.codeSent(VerificationSession(sessionInfo: nil, hint: Self.work))) else {
            throw Failure("accepted an event out of order")
        }
    }
}
