import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyTUI

@Suite("A firebase sign-in whose first factor is another provider's browser sign-in")
struct FederatedFirstFactorTests {
    let home = SecondFactorHint(id: "phone2", kind: .phone, displayName: "", phoneNumber: "+*******0199")
    let authorization = SignInProgress.authorizationStarted(
        url: URL(string: "http://idp/a/authorize?x=1")!, redirectURI: "http://127.0.0.1:5/oauth2redirect/a", listeningOn: ["127.0.0.1:5"])

    func screen(_ state: AppState) -> [String] {
        let terminal = RecordingTerminal(size: state.size)
        Painter(driver: terminal).paint(Renderer.render(state))
        return terminal.screen
    }

    /// The list with fb (`first_factor = "provider:a"`) and a.
    func federatedState() -> AppState {
        Fixtures.state(providers: [Fixtures.firebase("fb", firstFactor: "a"), Fixtures.provider("a")])
    }

    /// Enter on fb, and the core starting the first factor's browser sign-in at a.
    func atFirstFactor() -> AppState {
        var state = federatedState()
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.federatedSignInStarted(provider: "IdP A")))
        _ = state.handle(.signIn(authorization))
        return state
    }

    func signInScreen(_ state: AppState) -> SignInScreen? {
        guard case .signIn(let screen) = state.mode else { return nil }
        return screen
    }

    @Test("the first factor runs on the one sign-in screen, named as fb's first factor, then fb's steps follow on it")
    func browserThenSecondFactor() throws {
        var state = federatedState()
        #expect(state.handle(.key(.enter)) == [.startSignIn(provider: "fb")])
        _ = state.handle(.signIn(.federatedSignInStarted(provider: "IdP A")))
        _ = state.handle(.signIn(authorization))
        let signIn = try #require(signInScreen(state))
        #expect(signIn.purpose == .signIn(provider: "fb") && signIn.firstFactor == "IdP A")
        #expect(
            signIn.step
                == .browser(
                    url: URL(string: "http://idp/a/authorize?x=1")!, redirectURI: "http://127.0.0.1:5/oauth2redirect/a",
                    listeningOn: ["127.0.0.1:5"], browserProblem: nil))
        let lines = screen(state)
        #expect(lines.contains { $0.contains("Sign in to IdP A (first factor of Emulated)") })
        #expect(lines.contains { $0.contains("http://idp/a/authorize?x=1") })

        _ = state.handle(.signIn(.federatedSignInPassed(provider: "IdP A")))
        let passed = try #require(signInScreen(state))
        #expect(passed.firstFactor == nil && passed.step == .working("Signed in at IdP A; contacting the sign-in service…"))
        _ = state.handle(.signIn(.chooseHint([home])))
        #expect(signInScreen(state)?.step == .choosingHint([home]))
        #expect(state.handle(.key(.enter)) == [.answer(.hint(id: "phone2"))])
    }

    @Test("p and d on the first factor's browser screen restart fb's sign-in in that mode, still named as fb's first factor")
    func switchModes() throws {
        var state = atFirstFactor()
        #expect(state.handle(.key(.character("p"))) == [.cancelSignIn, .startSignIn(provider: "fb", mode: .paste)])
        let restarted = try #require(signInScreen(state))
        #expect(restarted.mode == .paste && restarted.firstFactor == "IdP A" && restarted.purpose == .signIn(provider: "fb"))
        var other = atFirstFactor()
        #expect(other.handle(.key(.character("d"))) == [.cancelSignIn, .startSignIn(provider: "fb", mode: .device)])
    }

    @Test("a failed first factor ends on the screen with the reason, and Enter there starts fb over")
    func failure() throws {
        var state = atFirstFactor()
        let problem = SignInProblem(message: "a: the sign-in timed out", recovery: .restart)
        _ = state.handle(.signIn(.failed(problem)))
        #expect(signInScreen(state)?.step == .failed(problem))
        #expect(state.providerErrors["fb"] == "a: the sign-in timed out")
        #expect(state.handle(.key(.enter)) == [.startSignIn(provider: "fb")])
    }

    @Test("Esc on the first factor's screen cancels fb's sign-in")
    func escape() {
        var state = atFirstFactor()
        #expect(state.handle(.key(.escape)) == [.cancelSignIn])
        #expect(state.mode == .list)
    }

    @Test("the detail pane says a federated first factor is a sign-in at that provider, not a password")
    func detailNamesTheFirstFactor() {
        let federated = Provider.firebaseTesting(
            name: "fb", settings: FirebaseSettings(apiKey: "fake-key", projectID: "demo", firstFactor: .provider("corp")))
        let password = Provider.firebaseTesting(name: "pw", settings: FirebaseSettings(apiKey: "fake-key", projectID: "demo"))
        #expect(ProviderSummary(federated).signInSummary == "a sign-in at corp, then a second factor")
        #expect(ProviderSummary(password).signInSummary == "email and password, then a second factor")
        #expect(ProviderSummary(password).enrollsPhones && ProviderSummary(password).redirectURITemplate == nil)
        #expect(!ProviderSummary(Provider.testing(name: "corp")).enrollsPhones)
    }

    @Test("the screen's interaction announces the first factor's sign-in and its end to the loop")
    func interaction() async throws {
        let inbox = Inbox()
        let settings = FirebaseSettings(apiKey: "fake-key", projectID: "demo", firstFactor: .provider("corp"))
        let provider = Provider.firebaseTesting(name: "fb", settings: settings)
        let corp = Provider.testing(name: "corp").asOAuth
        let interaction = ScreenInteraction(inbox: inbox, replies: PromptReplies(), isRemote: false)
        await interaction.federatedSignInStarted(at: corp, for: provider.asFirebase)
        await interaction.federatedSignInPassed(at: corp, for: provider.asFirebase)
        let events = inbox.drain().compactMap { event -> SignInProgress? in
            guard case .signIn(let progress) = event else { return nil }
            return progress
        }
        #expect(events == [.federatedSignInStarted(provider: "Corp"), .federatedSignInPassed(provider: "Corp")])
    }
}
