import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyProviders
@testable import LatchkeyTUI

@Suite("Device code, paste mode and the SSH chooser on the sign-in screen")
struct SignInModeTests {
    let device = DeviceCode(
        userCode: "WDJB-MJHT", verificationURI: "http://127.0.0.1:8000/o/device/",
        verificationURIComplete: "http://127.0.0.1:8000/o/device/?user_code=WDJBMJHT", expiresIn: 600, interval: 5,
        clientID: "latchkey-test-device")

    func signingIn(size: TerminalSize = TerminalSize(rows: 24, columns: 100)) -> AppState {
        var state = Fixtures.state(size: size)
        _ = state.handle(.key(.enter))
        return state
    }

    func screen(_ state: AppState) -> [String] {
        let terminal = RecordingTerminal(size: state.size)
        Painter(driver: terminal).paint(Renderer.render(state))
        return terminal.screen
    }

    @Test("the device screen names the client, warns to continue only if you started it, and shows the code large and plain")
    func deviceScreen() {
        var state = signingIn()
        _ = state.handle(.signIn(.deviceCode(device)))
        let lines = screen(state)
        let text = lines.joined(separator: "\n")
        #expect(text.contains("Client latchkey-test-device asks to sign in."))
        #expect(text.contains("Only continue if you started this yourself"))
        #expect(text.contains("   WDJB-MJHT"), "the plain code, for copying")
        #expect(text.contains(BlockFont.lines("WDJB-MJHT")[0]), "the code in large type")
        #expect(text.contains("http://127.0.0.1:8000/o/device/"))
        #expect(text.contains("Waiting for approval (polled every 5 s).") && text.contains("The code expires in 10m 00s."))
        _ = state.handle(.tick(Fixtures.now.addingTimeInterval(61)))
        #expect(screen(state).joined().contains("expires in 8m 59s"), "the remaining time counts down")
        _ = state.handle(.tick(Fixtures.now.addingTimeInterval(601)))
        #expect(screen(state).joined().contains("The code has expired"))
    }

    @Test("the verification address is an OSC 8 link and the QR code of the complete address sits beside the text")
    func deviceLinkAndQR() throws {
        var state = signingIn()
        _ = state.handle(.signIn(.deviceCode(device)))
        let frame = Renderer.render(state)
        #expect(frame.links.map(\.url) == ["http://127.0.0.1:8000/o/device/"])
        let qr = try #require(QRCode(text: "http://127.0.0.1:8000/o/device/?user_code=WDJBMJHT")).halfBlockLines()
        let lines = screen(state)
        for (offset, row) in qr.enumerated() {
            #expect(lines[2 + offset].hasSuffix(row.trimmingSuffix()), "QR row \(offset) on screen row \(2 + offset)")
        }
        #expect(frame.lines.allSatisfy { $0.reduce(0) { $0 + DisplayWidth.of($1.text) } == 100 })
        let styles = frame.lines.flatMap { $0 }.filter { qr.contains($0.text) }.map(\.style)
        #expect(styles.count == qr.count && styles.allSatisfy { $0 == .qrCode }, "the QR code has its own style (light on dark)")
    }

    @Test("a window too small for the QR code says so, and every line still fits")
    func deviceSmallWindow() {
        var state = signingIn(size: TerminalSize(rows: 16, columns: 60))
        _ = state.handle(.signIn(.deviceCode(device)))
        let frame = Renderer.render(state)
        #expect(frame.lines.allSatisfy { $0.reduce(0) { $0 + DisplayWidth.of($1.text) } == 60 })
        #expect(frame.text.contains { $0.hasPrefix("   WDJB-MJHT") }, "the plain code always shows")
        #expect(frame.text.contains { $0.contains("Make the window larger to see a QR code") })
        #expect(frame.text.contains { $0.contains("The code expires in") })
        #expect(!frame.text.joined().contains("▀▀▀▀▀▀▀"), "no half-drawn QR code")
    }

    @Test("Esc on the device screen cancels the polling sign-in")
    func deviceEscape() {
        var state = signingIn()
        _ = state.handle(.signIn(.deviceCode(device)))
        #expect(state.handle(.key(.escape)) == [.cancelSignIn])
        #expect(state.mode == .list)
    }

    @Test("p during a browser sign-in switches to paste mode: the running sign-in is cancelled and a paste one started")
    func pSwitchesToPaste() {
        var state = signingIn()
        _ = state.handle(
            .signIn(.authorizationStarted(url: URL(string: "http://idp/authorize?x=1")!, redirectURI: "r", listeningOn: ["127.0.0.1:1"])))
        #expect(screen(state).last!.contains("p paste URL instead"))
        #expect(state.handle(.key(.character("p"))) == [.cancelSignIn, .startSignIn(provider: "a", mode: .paste)])
        guard case .signIn(let screen) = state.mode else {
            Issue.record("expected the sign-in screen")
            return
        }
        #expect(screen.mode == .paste && screen.step == .working("Contacting the provider…"))
    }

    @Test("the paste line takes any length, shows only what fits, and Enter hands the whole URL to the core")
    func pasteLine() {
        var state = signingIn(size: TerminalSize(rows: 24, columns: 60))
        _ = state.handle(
            .signIn(.pasteRequested(url: URL(string: "http://idp/authorize?x=1")!, redirectURI: "http://127.0.0.1:51234/oauth2redirect/a")))
        let url = "http://127.0.0.1:51234/oauth2redirect/a?code=" + String(repeating: "c", count: 5000) + "&state=TAILMARK"
        for character in url { #expect(state.handle(.key(.character(character))) == []) }
        let lines = screen(state)
        let entry = lines.first { $0.hasPrefix(" > ") }!
        #expect(entry.hasPrefix(" > …") && entry.hasSuffix("&state=TAILMARK▏"))
        #expect(DisplayWidth.of(entry) <= 60)
        #expect(!lines.joined().contains("oauth2redirect/a?code="), "the start of the pasted text is not echoed")
        #expect(lines.contains { $0.contains("\(url.count) characters") })
        #expect(state.handle(.key(.enter)) == [.answer(.redirectURL(url))])
        #expect(screen(state).contains { $0.contains("Checking the redirect URL") })
    }

    @Test("Enter on an empty paste line beeps instead of submitting")
    func emptyPaste() {
        var state = signingIn()
        _ = state.handle(.signIn(.pasteRequested(url: URL(string: "http://idp/a")!, redirectURI: "http://127.0.0.1:5/r")))
        #expect(state.handle(.key(.enter)) == [.beep])
    }

    @Test("over SSH, the sign-in asks for paste, device code or a browser here before it listens, and goes on the way chosen")
    func sshChooser() {
        var state = signingIn()
        _ = state.handle(.signIn(.redirectModeNeeded(provider: "IdP A")))
        #expect(screen(state).contains { $0.contains("SSH session") })
        #expect(screen(state).last!.contains("b browser here"))
        #expect(state.handle(.key(.character("x"))) == [.beep])
        #expect(state.handle(.key(.character("d"))) == [.answer(.redirectMode(.device))])
        #expect(screen(state).contains { $0.contains("Asking the provider for a device code") })
        var other = signingIn()
        _ = other.handle(.signIn(.redirectModeNeeded(provider: "IdP A")))
        #expect(other.handle(.key(.enter)) == [.answer(.redirectMode(.loopback))])
        var leaving = signingIn()
        _ = leaving.handle(.signIn(.redirectModeNeeded(provider: "IdP A")))
        #expect(leaving.handle(.key(.escape)) == [.cancelSignIn])
        #expect(leaving.mode == .list)
    }

    @Test("the screen's interaction asks how to sign in only over SSH, and hands back the mode chosen")
    func interactionAsksOnlyOverSSH() async throws {
        let provider = Provider.testing(name: "a").asOAuth
        let local = ScreenInteraction(inbox: Inbox(), replies: PromptReplies(), isRemote: false)
        #expect(await local.chooseRedirectMode(for: provider) == .loopback)
        let inbox = Inbox()
        let replies = PromptReplies()
        let remote = ScreenInteraction(inbox: inbox, replies: replies, isRemote: true)
        async let chosen = remote.chooseRedirectMode(for: provider)
        while inbox.drain().isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        replies.deliver(.redirectMode(.paste))
        #expect(await chosen == .paste)
    }

    @Test("when no browser could be launched the screen offers paste and device mode")
    func noBrowserOffersPaste() {
        var state = signingIn(size: TerminalSize(rows: 24, columns: 80))
        _ = state.handle(
            .signIn(.authorizationStarted(url: URL(string: "http://idp/authorize?x=1")!, redirectURI: "r", listeningOn: ["127.0.0.1:1"])))
        _ = state.handle(.signIn(.browserUnavailable(reason: "no browser could be started (xdg-open: not found)")))
        let lines = screen(state)
        #expect(lines.contains { $0.contains("or press p to paste the redirect URL from elsewhere, d for a device code.") })
        #expect(state.handle(.key(.character("d"))) == [.cancelSignIn, .startSignIn(provider: "a", mode: .device)])
    }

    @Test("the screen's interaction returns the pasted line to the core, and cancelling it answers cancel")
    func interactionAwaitsPaste() async throws {
        let inbox = Inbox()
        let replies = PromptReplies()
        let interaction = ScreenInteraction(inbox: inbox, replies: replies, isRemote: false)
        let provider = Provider.testing(name: "a").asOAuth
        async let line = interaction.pasteRedirectURL(url: URL(string: "http://idp/a")!, provider: provider, redirectURI: "r")
        while inbox.drain().isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        replies.deliver(.redirectURL("http://127.0.0.1:5/r?code=x  "))
        #expect(try await line == "http://127.0.0.1:5/r?code=x")
        let task = Task { try await interaction.pasteRedirectURL(url: URL(string: "http://idp/a")!, provider: provider, redirectURI: "r") }
        task.cancel()
        await #expect(throws: SignInError.cancelled) { try await task.value }
    }
}

extension String {
    func trimmingSuffix() -> String {
        var copy = self
        while copy.hasSuffix(" ") { copy.removeLast() }
        return copy
    }
}
