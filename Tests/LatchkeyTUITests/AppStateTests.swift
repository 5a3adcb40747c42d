import Foundation
import LatchkeyBrokerWire
import Testing

@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyTUI
@testable import LatchkeyVault

@Suite("Keys and async results change the state and ask for work")
struct AppStateTests {
    let alice = Fixtures.account("a", "alice@example.test")

    @Test("j and k, and the arrows, move through providers and their nested accounts, stopping at the ends")
    func movesThroughRows() {
        var state = Fixtures.state(accounts: [alice])
        #expect(state.rows == [.provider("a"), .account(alice.id), .provider("b")])
        _ = state.handle(.key(.character("j")))
        #expect(state.selected == .account(alice.id))
        _ = state.handle(.key(.down))
        _ = state.handle(.key(.down))
        #expect(state.selected == .provider("b"))
        _ = state.handle(.key(.character("k")))
        _ = state.handle(.key(.up))
        _ = state.handle(.key(.up))
        #expect(state.selected == .provider("a"))
    }

    @Test("Enter on a provider opens the browser sign-in screen and starts a sign-in there")
    func enterStartsSignIn() {
        var state = Fixtures.state()
        #expect(state.handle(.key(.enter)) == [.startSignIn(provider: "a")])
        guard case .signIn(let screen) = state.mode else {
            Issue.record("expected the sign-in screen, got \(state.mode)")
            return
        }
        #expect(screen.purpose == .signIn(provider: "a"))
    }

    @Test("Enter on an account row signs that account in again; n adds another account; a restart keeps the account asked for")
    func signInAgainAndAddAccount() {
        var state = Fixtures.state(accounts: [alice])
        _ = state.handle(.key(.down))
        #expect(state.handle(.key(.enter)) == [.startSignIn(provider: "a", account: alice.selector)])
        guard case .signIn(let screen) = state.mode else {
            Issue.record("expected the sign-in screen, got \(state.mode)")
            return
        }
        #expect(screen.purpose == .signInAgain(alice.id))
        var again = Fixtures.state(accounts: [alice])
        _ = again.handle(.key(.down))
        _ = again.handle(.key(.enter))
        _ = again.handle(
            .signIn(.authorizationStarted(url: URL(string: "http://idp/a?x=1")!, redirectURI: "r", listeningOn: ["127.0.0.1:1"])))
        #expect(
            again.handle(.key(.character("d"))) == [.cancelSignIn, .startSignIn(provider: "a", mode: .device, account: alice.selector)])
        var adding = Fixtures.state(accounts: [alice])
        _ = adding.handle(.key(.down))
        #expect(adding.handle(.key(.character("n"))) == [.startSignIn(provider: "a")])
    }

    @Test("Esc on the sign-in screen cancels the sign-in and returns to the list")
    func escapeCancelsSignIn() {
        var state = Fixtures.state()
        _ = state.handle(.key(.enter))
        #expect(state.handle(.key(.escape)) == [.cancelSignIn])
        #expect(state.mode == .list)
    }

    @Test("a finished sign-in adds the account, selects it and reloads the keystore")
    func finishedSignInSelectsAccount() {
        var state = Fixtures.state()
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.authorizationStarted(url: URL(string: "http://idp/authorize?x=1")!, redirectURI: "r", listeningOn: [])))
        let effects = state.handle(.signIn(.finished(alice, added: true)))
        #expect(effects == [.loadAccounts])
        #expect(state.mode == .list)
        #expect(state.selected == .account(alice.id))
        #expect(state.message?.text.contains("Signed in to IdP A as alice@example.test") == true)
    }

    @Test("a failed sign-in returns to the list and marks the provider's row as an error")
    func failedSignIn() {
        var state = Fixtures.state()
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.failed(SignInProblem(message: "access_denied", recovery: .none))))
        #expect(state.mode == .list)
        #expect(state.providerErrors["a"] == "access_denied")
        #expect(state.message?.isError == true)
    }

    @Test("r refreshes the selected account and shows it as refreshing until the answer comes")
    func refreshKey() {
        var state = Fixtures.state(accounts: [alice])
        _ = state.handle(.key(.down))
        #expect(state.handle(.key(.character("r"))) == [.refresh(alice.selector)])
        #expect(state.status(of: alice) == .refreshing)
        var fresh = alice
        fresh.expiresAt = Fixtures.now.addingTimeInterval(7200)
        _ = state.handle(.accountUpdated(fresh))
        #expect(state.status(of: fresh) == .signedIn)
        #expect(state.account(alice.id)?.expiresAt == fresh.expiresAt)
    }

    @Test("a broken refresh shows as an error on the row, not as a crash")
    func refreshFailureIsAnError() {
        var state = Fixtures.state(accounts: [alice])
        _ = state.handle(.key(.down))
        _ = state.handle(.key(.character("r")))
        _ = state.handle(.refreshFailed(alice.id, "invalid_grant"))
        #expect(state.status(of: alice) == .error("invalid_grant"))
    }

    @Test("a release the agent holds is asked on the list: y approves, n denies, another key leaves it to latchkey approve")
    func agentReleasePrompt() {
        var state = Fixtures.state(accounts: [alice])
        let first = WaitingRelease(
            id: 3, account: "a:alice@example.test", requester: "local: `curl` pid 9", forwarded: false, expiresAt: 0)
        var second = first
        second.id = 4
        #expect(state.handle(.releaseWaiting(first)).isEmpty)
        #expect(state.handle(.releaseWaiting(second)).isEmpty)
        #expect(state.mode == .approveRelease(first), "the oldest is asked first")
        #expect(state.handle(.key(.character("y"))) == [.answerRelease(id: 3, approve: true)])
        #expect(state.mode == .approveRelease(second), "once the first is answered, the next is asked")
        _ = state.handle(.releaseClosed(3))
        #expect(state.mode == .approveRelease(second))
        _ = state.handle(.releaseClosed(4))
        #expect(state.mode == .list, "a release answered elsewhere is no longer asked")
        _ = state.handle(.releaseWaiting(first))
        #expect(state.handle(.key(.character("n"))) == [.answerRelease(id: 3, approve: false)])
        _ = state.handle(.releaseWaiting(second))
        #expect(state.handle(.key(.character("j"))).isEmpty)
        #expect(state.mode == .list && state.message?.text.contains("latchkey approve 4") == true)
    }

    @Test("x asks first; only y signs out")
    func signOutConfirms() {
        var state = Fixtures.state(accounts: [alice])
        _ = state.handle(.key(.down))
        #expect(state.handle(.key(.character("x"))) == [])
        #expect(state.mode == .confirmSignOut(alice.id))
        #expect(state.handle(.key(.character("n"))) == [])
        #expect(state.mode == .list)
        _ = state.handle(.key(.character("x")))
        #expect(state.handle(.key(.character("y"))) == [.signOut(alice.selector)])
        #expect(state.status(of: alice) == .signingOut)
        _ = state.handle(.signedOut(alice.id, note: "revoked"))
        #expect(state.accounts.isEmpty)
        #expect(state.selected == .provider("a"))
    }

    @Test("c asks for the token and hands it to the clipboard effect, never to the message")
    func copyToken() {
        var state = Fixtures.state(accounts: [alice])
        _ = state.handle(.key(.down))
        #expect(state.handle(.key(.character("c"))) == [.copyToken(alice.selector)])
        let token = Secret("fake-access-token-123")
        #expect(state.handle(.tokenReady(alice.id, token)) == [.writeClipboard(token)])
        #expect(state.message?.text.contains("fake-access-token") == false)
    }

    @Test("/ filters providers and accounts by name; Esc clears the filter")
    func filter() {
        let bob = Fixtures.account("b", "bob@example.test")
        var state = Fixtures.state(accounts: [alice, bob])
        _ = state.handle(.key(.character("/")))
        for character in "bob" { _ = state.handle(.key(.character(character))) }
        #expect(state.rows == [.provider("b"), .account(bob.id)])
        _ = state.handle(.key(.enter))
        #expect(!state.isEditingFilter)
        #expect(state.filter == "bob")
        _ = state.handle(.key(.escape))
        #expect(state.rows.count == 4)
    }

    @Test("? shows the help and any key goes back; q quits")
    func helpAndQuit() {
        var state = Fixtures.state()
        _ = state.handle(.key(.character("?")))
        #expect(state.mode == .help)
        _ = state.handle(.key(.character("x")))
        #expect(state.mode == .list)
        #expect(state.handle(.key(.character("q"))) == [.quit])
    }

    @Test("a token within 60 s of expiry is refreshed once while the screen is open")
    func proactiveRefresh() {
        let soon = Fixtures.account("a", "alice@example.test", expiresIn: 90)
        var state = Fixtures.state(accounts: [soon])
        #expect(state.handle(.tick(Fixtures.now.addingTimeInterval(10))) == [])
        #expect(state.handle(.tick(Fixtures.now.addingTimeInterval(31))) == [.refresh(soon.selector)])
        _ = state.handle(.refreshFailed(soon.id, "invalid_grant"))
        #expect(state.handle(.tick(Fixtures.now.addingTimeInterval(32))) == [], "a failed proactive refresh is not retried every tick")
    }

    @Test("an account without a refresh token is not refreshed ahead of expiry, and expires")
    func noRefreshTokenExpires() {
        let short = Fixtures.account("a", "alice@example.test", expiresIn: 5, refreshToken: false)
        var state = Fixtures.state(accounts: [short])
        #expect(state.handle(.tick(Fixtures.now.addingTimeInterval(6))) == [])
        #expect(state.status(of: short) == .expired)
    }

    @Test("the unlock prompt submits what was typed, and a new vault needs the passphrase twice")
    func unlockPrompt() {
        var state = AppState(
            providers: [Fixtures.provider("a")], now: Fixtures.now, size: TerminalSize(rows: 24, columns: 80),
            unlock: UnlockPrompt(vaultPath: "/v", creating: true))
        for character in "long enough" { _ = state.handle(.key(.character(character))) }
        #expect(state.handle(.key(.enter)) == [])
        for character in "long enough" { _ = state.handle(.key(.character(character))) }
        #expect(state.handle(.key(.enter)) == [.unlock(Secret("long enough"))])
        _ = state.handle(.accountsLoaded([], backend: "vault"))
        #expect(state.mode == .list)
        #expect(state.unlockedAt == Fixtures.now)
    }

    @Test("a wrong passphrase brings the prompt back with the reason")
    func wrongPassphrase() {
        var state = AppState(
            providers: [], now: Fixtures.now, size: TerminalSize(rows: 24, columns: 80),
            unlock: UnlockPrompt(vaultPath: "/v", creating: false))
        for character in "nope" { _ = state.handle(.key(.character(character))) }
        #expect(state.handle(.key(.enter)) == [.unlock(Secret("nope"))])
        _ = state.handle(.unlockFailed("Wrong passphrase; try again."))
        guard case .unlock(let prompt) = state.mode else {
            Issue.record("expected the prompt again")
            return
        }
        #expect(prompt.error == "Wrong passphrase; try again.")
        #expect(prompt.typedCount == 0)
    }
}

@Suite("Default account from the screen")
struct DefaultAccountKeyTests {
    @Test("D on an account row asks to make it its provider's default; on a provider row it beeps and says why")
    func makeDefault() {
        var state = Fixtures.state(accounts: [Fixtures.account("a", "alice@example.test"), Fixtures.account("a", "bob@example.test")])
        #expect(state.handle(.key(.character("D"))) == [.beep])
        #expect(state.message?.isError == true)
        _ = state.handle(.key(.down))
        _ = state.handle(.key(.down))
        #expect(state.handle(.key(.character("D"))) == [.makeDefault(AccountSelector(provider: "a", account: "sub-bob@example.test"))])
    }
}
