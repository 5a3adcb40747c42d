import Foundation
import Testing

@testable import LatchkeySecondFactor
@testable import LatchkeyTUI
@testable import LatchkeyVault

@Suite("Firebase sign-in and phone enrollment screens")
struct FirebaseStepsTests {
    let work = SecondFactorHint(id: "phone1", kind: .phone, displayName: "Work phone", phoneNumber: "+*******0100")
    let home = SecondFactorHint(id: "phone2", kind: .phone, displayName: "", phoneNumber: "+*******0199")
    let app = SecondFactorHint(id: "totp1", kind: .totp, displayName: "", phoneNumber: nil)

    func firebaseState(accounts: [AccountSummary] = []) -> AppState {
        Fixtures.state(providers: [Fixtures.firebase("fb"), Fixtures.provider("a")], accounts: accounts)
    }

    func screen(_ state: AppState) -> [String] {
        let terminal = RecordingTerminal(size: state.size)
        Painter(driver: terminal).paint(Renderer.render(state))
        return terminal.screen
    }

    func type(_ text: String, into state: inout AppState) {
        for character in text { _ = state.handle(.key(.character(character))) }
    }

    /// A sign-in at the code entry for the second phone.
    func atCodeEntry() -> AppState {
        var state = firebaseState()
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.chooseHint([work, home])))
        _ = state.handle(.key(.character("2")))
        _ = state.handle(.signIn(.codeSent(home, notice: nil)))
        _ = state.handle(.signIn(.codeNeeded(home, problem: nil, canResend: true)))
        return state
    }

    @Test("Enter on a firebase provider opens the email and password form; the password is drawn as dots only")
    func credentials() {
        var state = firebaseState()
        #expect(state.handle(.key(.enter)) == [.startSignIn(provider: "fb")])
        _ = state.handle(.signIn(.credentialsNeeded))
        type("alice@example.test", into: &state)
        #expect(state.handle(.key(.enter)) == [], "Enter on the email moves to the password")
        type("hunter22", into: &state)
        let lines = screen(state)
        #expect(lines.contains { $0.contains("Email") && $0.contains("alice@example.test") })
        #expect(lines.contains { $0.contains("Password") && $0.contains("••••••••") })
        #expect(!lines.joined().contains("hunter22"))
        #expect(state.handle(.key(.enter)) == [.answer(.credentials(email: "alice@example.test", password: Secret("hunter22")))])
        #expect(screen(state).contains { $0.contains("Checking the password") })
        #expect(!String(describing: state).contains("hunter22"), "the typed password is never in the state's description")
    }

    @Test("the chooser lists each factor exactly as the server gave it, never an unmasked number")
    func chooser() {
        var state = firebaseState()
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.chooseHint([work, home, app])))
        let lines = screen(state)
        #expect(lines.contains { $0.contains("1  Work phone  +*******0100") })
        #expect(lines.contains { $0.contains("2  +*******0199") })
        #expect(lines.contains { $0.contains("3  Authenticator app") })
        _ = state.handle(.key(.down))
        #expect(state.handle(.key(.enter)) == [.answer(.hint(id: "phone2"))])
        #expect(screen(state).contains { $0.contains("Sending a code to +*******0199") })
    }

    @Test("a full number from a backend is masked before it is drawn")
    func fullNumberMasked() {
        var state = firebaseState()
        _ = state.handle(.key(.enter))
        let leaky = SecondFactorHint(id: "p", kind: .phone, displayName: "Mine", phoneNumber: "+15555550100")
        _ = state.handle(.signIn(.chooseHint([leaky])))
        #expect(!screen(state).joined().contains("5555550100"))
    }

    @Test("code entry: 'code sent to' the masked number, six digits only, Enter submits the code")
    func codeEntry() {
        var state = atCodeEntry()
        #expect(screen(state).contains { $0.contains("Code sent to +*******0199 by SMS.") })
        type("12a3456789", into: &state)
        #expect(screen(state).contains { $0.contains("Code  1 2 3 4 5 6") })
        #expect(state.handle(.key(.enter)) == [.answer(.code(.code(Secret("123456"))))])
    }

    @Test("fewer than six digits are not submitted")
    func shortCode() {
        var state = atCodeEntry()
        type("123", into: &state)
        #expect(state.handle(.key(.enter)) == [.beep])
        #expect(screen(state).contains { $0.contains("The code has 6 digits.") })
    }

    @Test("r sends a new code only after the countdown, which is shown")
    func resendCountdown() {
        var state = atCodeEntry()
        #expect(screen(state).contains { $0.contains("r sends a new code in 00:30") })
        #expect(state.handle(.key(.character("r"))) == [.beep])
        _ = state.handle(.tick(Fixtures.now.addingTimeInterval(12)))
        #expect(screen(state).contains { $0.contains("r sends a new code in 00:18") })
        _ = state.handle(.tick(Fixtures.now.addingTimeInterval(30)))
        #expect(state.handle(.key(.character("r"))) == [.answer(.code(.resend))])
    }

    @Test("a wrong code asks for the code again with the reason; the entry starts empty")
    func wrongCode() {
        var state = atCodeEntry()
        type("111111", into: &state)
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.codeNeeded(home, problem: SignInProblem(FirebaseAuthError.wrongCode), canResend: true)))
        let lines = screen(state)
        #expect(lines.contains { $0.contains("the verification code is wrong; check it and enter it again") })
        #expect(lines.contains { $0.contains("Code  · · · · · ·") })
    }

    @Test("an expired code is followed by a new one, and the screen says why it was sent again")
    func expiredCode() {
        var state = atCodeEntry()
        type("111111", into: &state)
        _ = state.handle(.key(.enter))
        let expired = FirebaseAuthError.codeExpired(code: "SESSION_EXPIRED")
        _ = state.handle(.signIn(.codeSent(home, notice: "\(expired.description); a new code was sent.")))
        _ = state.handle(.signIn(.codeNeeded(home, problem: nil, canResend: true)))
        let text = screen(state).joined()
        #expect(
            text.contains("the verification code has expired or was already used (SESSION_EXPIRED); send a new code; a new code was sent."))
    }

    @Test("too many attempts ends on a screen that says to wait, and a key goes back to the list")
    func tooManyAttempts() {
        var state = atCodeEntry()
        _ = state.handle(.signIn(.failed(SignInProblem(FirebaseAuthError.tooManyAttempts))))
        let lines = screen(state)
        #expect(lines.contains { $0.contains("TOO_MANY_ATTEMPTS_TRY_LATER") })
        #expect(lines.contains { $0.contains("Wait a few minutes before trying again") })
        #expect(state.handle(.key(.enter)) == [])
        #expect(state.mode == .list)
        #expect(state.providerErrors["fb"] != nil)
    }

    @Test("a pending credential that is no longer valid offers to sign in again from the start")
    func restart() {
        var state = atCodeEntry()
        _ = state.handle(.signIn(.failed(SignInProblem(FirebaseAuthError.pendingCredentialInvalid(code: "X")))))
        #expect(screen(state).contains { $0.contains("Press Enter to sign in again from the start") })
        #expect(state.handle(.key(.enter)) == [.startSignIn(provider: "fb")])
    }

    @Test("Esc at any step cancels the sign-in")
    func escape() {
        var state = atCodeEntry()
        #expect(state.handle(.key(.escape)) == [.cancelSignIn])
        #expect(state.mode == .list)
    }

    @Test("the finished sign-in names the second factor used")
    func finishedNamesFactor() {
        var state = atCodeEntry()
        var account = Fixtures.account("fb", "alice@example.test")
        account.secondFactor = "phone"
        _ = state.handle(.signIn(.finished(account, added: true)))
        #expect(state.mode == .list)
        #expect(state.message?.text == "Signed in to Emulated as alice@example.test (second factor: phone).")
    }

    @Test("e on a signed-in firebase account opens enrollment: E.164 is checked before anything is sent")
    func enrollment() {
        let alice = Fixtures.account("fb", "alice@example.test")
        var state = firebaseState(accounts: [alice])
        _ = state.handle(.key(.down))
        #expect(screen(state).last!.contains("e enroll phone"))
        _ = state.handle(.key(.character("e")))
        type("5555550100", into: &state)
        _ = state.handle(.key(.tab))
        type("Desk", into: &state)
        #expect(state.handle(.key(.enter)) == [.beep])
        #expect(screen(state).contains { $0.contains("E.164") })
        for _ in 0..<10 { _ = state.handle(.key(.backspace)) }
        type("+15555550100", into: &state)
        _ = state.handle(.key(.tab))
        #expect(state.handle(.key(.enter)) == [.enrollPhone(alice.selector, phoneNumber: "+15555550100", displayName: "Desk")])
        #expect(screen(state).contains { $0.contains("Sending a code to +*******0100") })
        _ = state.handle(
            .signIn(
                .codeNeeded(
                    SecondFactorHint(id: "", kind: .phone, displayName: "Desk", phoneNumber: "+*******0100"), problem: nil, canResend: false
                )))
        #expect(!screen(state).joined().contains("r sends a new code"))
        var enrolled = alice
        enrolled.secondFactor = "phone"
        #expect(state.handle(.signIn(.finished(enrolled, added: false))) == [.loadAccounts])
        #expect(state.message?.text.contains("Enrolled the phone for alice@example.test") == true)
    }

    @Test("e on an account of an OpenID provider explains itself and beeps")
    func enrollmentNeedsFirebase() {
        var state = Fixtures.state(accounts: [Fixtures.account("a", "alice@example.test")])
        _ = state.handle(.key(.down))
        #expect(state.handle(.key(.character("e"))) == [.beep])
        #expect(state.mode == .list)
    }

    @Test("the interaction turns a chosen hint id back into the server's hint, and a code answer into a CodeAnswer")
    func interaction() async {
        let inbox = Inbox()
        let replies = PromptReplies()
        let interaction = ScreenInteraction(inbox: inbox, replies: replies, isRemote: false)
        replies.deliver(.hint(id: "phone2"))
        #expect(await interaction.chooseHint([work, home]) == home)
        replies.deliver(.code(.resend))
        let session = VerificationSession(sessionInfo: Secret("s"), hint: home)
        #expect(await interaction.enterCode(for: session, problem: FirebaseAuthError.wrongCode) == .resend)
        let events = inbox.drain()
        #expect(events.count == 2)
        guard case .signIn(.codeNeeded(let hint, let problem, let canResend)) = events.last else {
            Issue.record("expected codeNeeded, got \(events)")
            return
        }
        #expect(hint == home && problem?.recovery == .retryCode && canResend)
    }
}
