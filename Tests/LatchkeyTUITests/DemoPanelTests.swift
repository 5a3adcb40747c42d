import Foundation
import LatchkeyCore
import Testing

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
}
