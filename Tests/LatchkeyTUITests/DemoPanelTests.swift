import Foundation
import Testing

@testable import LatchkeySecondFactor
@testable import LatchkeyTUI

@Suite("latchkey demo on the screen: the panel and the demo browser key")
struct DemoPanelTests {
    let authorization = URL(string: "http://127.0.0.1:4000/authorize?client_id=latchkey-demo")!

    func demoState(size: TerminalSize = TerminalSize(rows: 30, columns: 100)) -> AppState {
        var state = Fixtures.state(size: size)
        state.demo = DemoPanel(notes: ["Demo OpenID: user ada, password lovelace-demo"])
        return state
    }

    func lines(_ state: AppState) -> [String] {
        let terminal = RecordingTerminal(size: state.size)
        Painter(driver: terminal).paint(Renderer.render(state))
        return terminal.screen
    }

    @Test("a on a demo browser sign-in screen hands the authorization URL to the demo browser")
    func demoBrowserKey() {
        var state = demoState()
        _ = state.handle(.key(.enter))
        #expect(state.handle(.key(.character("a"))) == [], "nothing to open before the address is known")
        _ = state.handle(.signIn(.authorizationStarted(url: authorization, redirectURI: "r", listeningOn: ["127.0.0.1:4001"])))
        #expect(lines(state).last?.contains("a demo browser") == true)
        #expect(state.handle(.key(.character("a"))) == [.demoBrowse(.authorization(authorization))])
        #expect(state.message?.text.contains("demo browser") == true)
    }

    @Test("a on a demo device-code screen sends the demo browser to the verification page with the code shown")
    func demoBrowserApprovesTheDeviceCode() throws {
        var state = demoState()
        _ = state.handle(.key(.enter))
        _ = state.handle(.key(.character("d")))
        #expect(state.handle(.key(.character("a"))) == [], "nothing to approve before the provider issued a code")
        let code = DeviceCode(
            userCode: "BCDF-GHJK", verificationURI: "http://127.0.0.1:4000/device", verificationURIComplete: nil, expiresIn: 600,
            interval: 2, clientID: "latchkey-demo")
        _ = state.handle(.signIn(.deviceCode(code)))
        let screen = lines(state)
        #expect(screen.last?.contains("a demo browser") == true)
        #expect(screen.contains { $0.contains("demo browser approves the code") })
        let verification = try #require(URL(string: "http://127.0.0.1:4000/device"))
        #expect(state.handle(.key(.character("a"))) == [.demoBrowse(.device(verificationURI: verification, userCode: "BCDF-GHJK"))])
    }

    @Test("outside the demo, a does nothing on a sign-in screen")
    func noDemoBrowserOutsideTheDemo() {
        var state = Fixtures.state()
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.authorizationStarted(url: authorization, redirectURI: "r", listeningOn: [])))
        #expect(state.handle(.key(.character("a"))) == [])
        #expect(lines(state).allSatisfy { !$0.contains("demo browser") })
    }

    @Test("the panel shows the notes and the newest SMS messages, sanitised")
    func panelShowsInbox() {
        var state = demoState()
        #expect(lines(state).contains { $0.contains("nothing yet") })
        let messages =
            (1...5).map { "12:00:0\($0)  To sign in using +15555551234, use the code 00000\($0)." } + ["evil \u{1B}]52;c;x\u{07}"]
        _ = state.handle(.demoPanel(DemoPanel(notes: state.demo!.notes, inbox: messages)))
        let screen = lines(state)
        #expect(screen.contains { $0.contains("user ada, password lovelace-demo") })
        #expect(!screen.contains { $0.contains("000001") }, "only the newest three fit")
        #expect(screen.contains { $0.contains("000005") })
        #expect(!screen.joined().contains("\u{1B}"))
    }

    @Test("a window too short for the panel keeps the list and leaves the panel out")
    func panelLeftOutWhenShort() {
        let state = demoState(size: TerminalSize(rows: 12, columns: 40))
        let screen = lines(state)
        #expect(screen.count == 12)
        #expect(!screen.contains { $0.contains("── Demo") })
    }

    // MARK: - 80x24, the size most terminals open at

    /// The panel's notes as `latchkey demo` writes them (`DemoSession.notes`), the phone app at 961234.
    static let sessionNotes = [
        "Demo OpenID: user ada, password lovelace-demo (a: the demo browser signs in)",
        "Demo Firebase (SMS): ada@demo.test, password lovelace-demo",
        "Its authenticator: Phone app shows 961234",
        "Then: n another account, ⏎ on one signs it in again, m uses it in this directory, + a provider",
    ]
    static let phoneApp = SecondFactorHint(id: "authenticator", kind: .totp, displayName: "Phone app", phoneNumber: nil)
    static let workPhone = SecondFactorHint(id: "work-phone", kind: .phone, displayName: "Work phone", phoneNumber: "+*******1234")

    /// The demo's two providers on an 80x24 window, the first selected.
    func demoAt80x24(inbox: [String] = []) -> AppState {
        var state = Fixtures.state(
            providers: [Fixtures.provider("demo-openid", displayName: "Demo OpenID"), Fixtures.firebase("demo-firebase")],
            size: TerminalSize(rows: 24, columns: 80))
        state.demo = DemoPanel(notes: Self.sessionNotes, inbox: inbox)
        return state
    }

    /// The screen as a person reads it: the rows one after another, each run of blanks one
    /// space, so a sentence wrapped over rows reads whole and one cut does not.
    func reading(_ screen: [String]) -> String {
        screen.joined(separator: " ").split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    @Test("at 80x24 the panel shows the authenticator code whole, on the list and where the code is typed")
    func authenticatorCodeWholeAt80x24() {
        var state = demoAt80x24()
        let list = lines(state)
        #expect(list.count == 24 && list.allSatisfy { DisplayWidth.of($0) <= 80 })
        #expect(reading(list).contains("Phone app shows 961234"))
        #expect(list.contains { $0.contains("Phone app shows 961234") }, "the code on one row, beside what it is")
        #expect(reading(list).contains("+ a provider"), "the last note is wrapped, not cut")
        _ = state.handle(.key(.down))
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.chooseHint([Self.workPhone, Self.phoneApp])))
        _ = state.handle(.key(.character("2")))
        _ = state.handle(.signIn(.codeNeeded(Self.phoneApp, problem: nil, canResend: false)))
        let entry = lines(state)
        #expect(reading(entry).contains("Enter the code your authenticator app shows for Phone app"))
        #expect(entry.contains { $0.contains("Code  · · · · · ·") })
        #expect(entry.contains { $0.contains("961234") })
    }

    @Test("at 80x24 an SMS code in the inbox is wrapped whole, never cut")
    func smsCodeWholeAt80x24() {
        let message = "12:00:01  To sign in to Demo Firebase (SMS) with +15555551234, use the code 480213. It expires in 5 minutes."
        var state = demoAt80x24(inbox: [message])
        _ = state.handle(.key(.down))
        _ = state.handle(.key(.enter))
        _ = state.handle(.signIn(.codeSent(Self.workPhone, notice: nil)))
        _ = state.handle(.signIn(.codeNeeded(Self.workPhone, problem: nil, canResend: true)))
        let screen = lines(state)
        #expect(reading(screen).contains(reading([message])))
        #expect(screen.contains { $0.contains("480213") })
        #expect(screen.contains { $0.contains("Code  · · · · · ·") })
    }

    @Test("at 80x24 the demo's hints on each sign-in screen read whole, none cut mid-word")
    func demoHintsWholeAt80x24() {
        var state = demoAt80x24()
        _ = state.handle(.key(.enter))
        _ = state.handle(
            .signIn(.authorizationStarted(url: authorization, redirectURI: "http://127.0.0.1:4001/cb", listeningOn: ["127.0.0.1:4001"])))
        _ = state.handle(.signIn(.browserUnavailable(reason: "no browser could be started (no xdg-open, $BROWSER unset)")))
        let browser = reading(lines(state))
        #expect(browser.contains("No browser could be opened: no browser could be started (no xdg-open, $BROWSER unset)"))
        #expect(browser.contains("or press p to paste the redirect URL from elsewhere, d for a device code."))
        #expect(browser.contains("Demo: press a and the demo browser signs in as the demo user for you."))
        #expect(browser.contains("Listening on 127.0.0.1:4001 for http://127.0.0.1:4001/cb"))

        _ = state.handle(.key(.character("p")))
        _ = state.handle(.signIn(.pasteRequested(url: authorization, redirectURI: "http://127.0.0.1:4001/oauth2redirect/demo-openid")))
        let paste = reading(lines(state))
        #expect(
            paste.contains(
                "2. After you sign in, the browser fails to load http://127.0.0.1:4001/oauth2redirect/demo-openid… (nothing listens there). "
                    + "Copy the whole address from its address bar."))
        #expect(paste.contains("3. Paste it here and press Enter:"))

        state = demoAt80x24()
        _ = state.handle(.key(.enter))
        _ = state.handle(.key(.character("d")))
        _ = state.handle(
            .signIn(
                .deviceCode(
                    DeviceCode(
                        userCode: "BCDF-GHJK", verificationURI: "http://127.0.0.1:4000/device", verificationURIComplete: nil,
                        expiresIn: 600, interval: 2, clientID: "latchkey-demo"))))
        let device = lines(state)
        #expect(reading(device).contains("Demo: press a and the demo browser approves the code as the demo user."))
        #expect(device.contains { $0.contains("BCDF-GHJK") })
    }

    @Test("at 80x24 the help draws every key's meaning whole, in the demo too, wrapped under its column")
    func helpWholeAt80x24() {
        for demo in [false, true] {
            var state = demoAt80x24()
            if !demo { state.demo = nil }
            _ = state.handle(.key(.character("?")))
            let screen = lines(state)
            let text = reading(screen)
            #expect(text.contains("Enter sign in (on an account row: that account again, as `login PROVIDER:ACCOUNT`)"))
            #expect(text.contains("m make the account the one its provider means in this directory (config.toml)"))
            #expect(text.contains("q quit"), "the last key is not pushed off the screen")
            #expect(text.contains("Tokens are refreshed a minute before they expire while this screen is open."))
            let continued = screen.first {
                $0.hasPrefix(String(repeating: " ", count: 13)) && !$0.trimmingCharacters(in: .whitespaces).isEmpty
            }
            #expect(continued != nil, "a wrapped meaning continues under its column, not under the keys")
        }
    }
}
