import Foundation
import LatchkeyCore
import LatchkeyTestSupport
import Testing

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
    func federatedState(remote: Bool = false) -> AppState {
        var state = Fixtures.state(providers: [Fixtures.firebase("fb", firstFactor: "a"), Fixtures.provider("a")])
        state.isRemote = remote
        return state
    }

    /// Enter on fb, and the core starting the first factor's browser sign-in at a.
    func atFirstFactor() -> AppState {
        var state = federatedState()
        _ = state.handle(.key(.enter))
        _ = state.handle(.secondFactor(.firstFactorSignIn(provider: "a")))
        _ = state.handle(.signIn(authorization))
        return state
    }

    @Test("the first factor runs on a's browser screen, named as fb's first factor, then fb's second-factor screens follow")
    func browserThenSecondFactor() {
        var state = federatedState()
        #expect(state.handle(.key(.enter)) == [.startSignIn(provider: "fb")])
        _ = state.handle(.secondFactor(.firstFactorSignIn(provider: "a")))
        _ = state.handle(.signIn(authorization))
        guard case .signIn(let signIn) = state.mode else {
            Issue.record("expected the browser screen, got \(state.mode)")
            return
        }
        #expect(signIn.provider == "a" && signIn.firstFactorOf == "fb")
        #expect(signIn.authorizationURL == URL(string: "http://idp/a/authorize?x=1"))
        let lines = screen(state)
        #expect(lines.contains { $0.contains("Sign in to IdP A (first factor of Emulated)") })
        #expect(lines.contains { $0.contains("http://idp/a/authorize?x=1") })

        _ = state.handle(.secondFactor(.firstFactorPassed(provider: "a")))
        guard case .secondFactor(let firebase) = state.mode else {
            Issue.record("expected fb's screen, got \(state.mode)")
            return
        }
        #expect(firebase.provider == "fb" && firebase.purpose == .signIn)
        #expect(firebase.step == .working("Signed in at IdP A; contacting the sign-in service…"))
        _ = state.handle(.secondFactor(.chooseHint([home])))
        #expect(state.mode == .secondFactor(SecondFactorScreen(provider: "fb", purpose: .signIn)).withStep(.choosing([home])))
        #expect(state.handle(.key(.enter)) == [.answer(.hint(id: "phone2"))])
    }

    @Test("p and d on the first factor's screen restart fb's sign-in in that mode, and the screen stays a's")
    func switchModes() {
        var state = atFirstFactor()
        #expect(state.handle(.key(.character("p"))) == [.cancelSignIn, .startSignIn(provider: "fb", mode: .paste)])
        let expected = AppState.Mode.signIn(SignInScreen(provider: "a", startedAt: Fixtures.now, mode: .paste, firstFactorOf: "fb"))
        #expect(state.mode == expected)
        // The restarted sign-in reports its first factor again: the paste screen is kept.
        _ = state.handle(.secondFactor(.firstFactorSignIn(provider: "a")))
        #expect(state.mode == expected)
        var other = atFirstFactor()
        #expect(other.handle(.key(.character("d"))) == [.cancelSignIn, .startSignIn(provider: "fb", mode: .device)])
    }

    @Test("over SSH, Enter on fb asks first how to sign in at a, and the choice starts fb's sign-in")
    func sshChooser() {
        var state = federatedState(remote: true)
        #expect(state.handle(.key(.enter)) == [])
        #expect(state.mode == .signIn(SignInScreen(provider: "a", startedAt: Fixtures.now, choosingMode: true, firstFactorOf: "fb")))
        #expect(screen(state).contains { $0.contains("SSH session") })
        #expect(state.handle(.key(.character("d"))) == [.startSignIn(provider: "fb", mode: .device)])
        #expect(state.mode == .signIn(SignInScreen(provider: "a", startedAt: Fixtures.now, mode: .device, firstFactorOf: "fb")))
    }

    @Test("a failed first factor ends on fb's screen with the reason, and Enter there starts fb over")
    func failure() {
        var state = atFirstFactor()
        let problem = SecondFactorProgress.Problem(message: "a: the sign-in timed out", recovery: .restart)
        _ = state.handle(.secondFactor(.failed(provider: "fb", problem)))
        #expect(state.mode == .secondFactor(SecondFactorScreen(provider: "fb", purpose: .signIn).withStep(.failed(problem))))
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
        #expect(ProviderSummary(federated).signInDescription == "a sign-in at corp, then a second factor")
        #expect(ProviderSummary(password).signInDescription == "email and password, then a second factor")
        #expect(ProviderSummary(password).enrollsPhones && ProviderSummary(password).redirectMode == nil)
        #expect(!ProviderSummary(Provider.testing(name: "corp")).enrollsPhones)
    }

    @Test("the screen's interaction announces the first factor's sign-in and its end to the loop")
    func interaction() async throws {
        let inbox = Inbox()
        let settings = FirebaseSettings(apiKey: "fake-key", projectID: "demo", firstFactor: .provider("corp"))
        let provider = Provider.firebaseTesting(name: "fb", settings: settings)
        #expect(ProviderSummary(provider).firstFactorProvider == "corp")
        let corp = try #require(Provider.testing(name: "corp").oauth)
        let interaction = ScreenInteraction(inbox: inbox, replies: PromptReplies())
        await interaction.federatedSignInStarted(at: corp, for: try #require(provider.firebase))
        await interaction.federatedSignInPassed(at: corp, for: try #require(provider.firebase))
        let events = inbox.drain().compactMap { event -> SecondFactorProgress? in
            guard case .secondFactor(let progress) = event else { return nil }
            return progress
        }
        #expect(events == [.firstFactorSignIn(provider: "corp"), .firstFactorPassed(provider: "corp")])
    }
}

extension AppState.Mode {
    fileprivate func withStep(_ step: SecondFactorScreen.Step) -> AppState.Mode {
        guard case .secondFactor(var screen) = self else { return self }
        screen.step = step
        return .secondFactor(screen)
    }
}

extension SecondFactorScreen {
    fileprivate func withStep(_ step: SecondFactorScreen.Step) -> SecondFactorScreen {
        var copy = self
        copy.step = step
        return copy
    }
}
