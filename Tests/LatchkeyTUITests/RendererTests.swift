import Foundation
import LatchkeyBrokerWire
import Testing

@testable import LatchkeyTUI
@testable import LatchkeyVault

@Suite("Frames for a size: alignment, truncation, flow screens, nothing unsafe drawn")
struct RendererTests {
    /// Paints the state on a recording terminal and returns what is on its screen.
    func screen(_ state: AppState) -> (RecordingTerminal, [String]) {
        let terminal = RecordingTerminal(size: state.size)
        Painter(driver: terminal).paint(Renderer.render(state))
        return (terminal, terminal.screen)
    }

    @Test("accounts whose stored expiry is absurdly far or long past are drawn, not trapped on")
    func absurdExpiries() {
        var far = Fixtures.account("a", "far@example.test")
        far.expiresAt = Date(timeIntervalSince1970: 1e300)
        var past = Fixtures.account("a", "past@example.test")
        past.expiresAt = Date(timeIntervalSince1970: -1e300)
        var state = Fixtures.state(accounts: [far, past])
        _ = state.handle(.key(.down))
        let (_, lines) = screen(state)
        #expect(lines.contains { $0.contains("far@example.test") })
        #expect(lines.contains { $0.contains("past@example.test") && $0.contains("expired") })
    }

    @Test("every line of every frame fits the window exactly, from 40x12 to 250x70")
    func linesFit() {
        let japanese = Fixtures.provider("jp", displayName: "ログイン テスト 日本語の表示名がとても長いプロバイダ")
        for (rows, columns) in [(12, 40), (24, 80), (70, 250), (13, 41)] {
            var state = Fixtures.state(
                providers: [Fixtures.provider("a"), japanese],
                accounts: [Fixtures.account("a", "alice@example.test"), Fixtures.account("jp", "山田太郎@example.test")],
                size: TerminalSize(rows: rows, columns: columns))
            _ = state.handle(.key(.down))
            let frame = Renderer.render(state)
            #expect(frame.lines.count == rows)
            for line in frame.lines {
                #expect(line.reduce(0) { $0 + DisplayWidth.of($1.text) } == columns)
            }
        }
    }

    @Test("Japanese display names take two cells per character, so the status column lines up")
    func wideCharactersAlign() {
        let state = Fixtures.state(
            providers: [Fixtures.provider("a"), Fixtures.provider("jp", displayName: "ログイン")],
            accounts: [Fixtures.account("a", "alice@example.test"), Fixtures.account("jp", "山田@example.test")])
        let (_, lines) = screen(state)
        let alice = lines.first { $0.contains("alice@") }!
        let yamada = lines.first { $0.contains("山田@") }!
        func statusColumn(_ line: String) -> Int {
            let prefix = line[..<line.range(of: "signed in")!.lowerBound]
            return DisplayWidth.of(String(prefix))
        }
        #expect(statusColumn(alice) == statusColumn(yamada))
        #expect(DisplayWidth.of("ログイン") == 8)
    }

    @Test("a name too long for its column is cut with an ellipsis, never wrapped")
    func truncation() {
        let long = Fixtures.account("a", String(repeating: "x", count: 120) + "@example.test")
        let state = Fixtures.state(accounts: [long], size: TerminalSize(rows: 12, columns: 40))
        let (_, lines) = screen(state)
        let row = lines.first { $0.contains("xxxx") }!
        #expect(row.contains("…"))
        #expect(DisplayWidth.of(row) <= 40)
    }

    @Test("below 40x12 the window shows 'make the window larger' instead of the list")
    func tooSmall() {
        for size in [TerminalSize(rows: 11, columns: 80), TerminalSize(rows: 24, columns: 39)] {
            let (_, lines) = screen(Fixtures.state(size: size))
            #expect(lines.contains { $0.contains("Make the window larger") })
            #expect(!lines.contains { $0.contains("IdP A") })
        }
    }

    @Test("the list shows providers, nested accounts, status, a live countdown and the keystore backend")
    func mainScreen() {
        var state = Fixtures.state(accounts: [Fixtures.account("a", "alice@example.test", expiresIn: 125)])
        let (_, lines) = screen(state)
        #expect(lines[0].contains("Latchkey") && lines[0].contains("vault unlocked"))
        let row = lines.first { $0.contains("alice@example.test") }!
        #expect(row.contains("signed in") && row.contains("02:05") && row.contains("vault"))
        #expect(lines.contains { $0.contains("IdP B (b)") && $0.contains("signed out") })
        #expect(lines.last!.contains("q quit"))
        _ = state.handle(.tick(Fixtures.now.addingTimeInterval(1)))
        #expect(screen(state).1.contains { $0.contains("02:04") }, "the countdown moves with the clock")
    }

    @Test("the detail pane shows issuer, the provider's redirect URI, scopes, expiry and refresh token")
    func detailPane() {
        var state = Fixtures.state(accounts: [Fixtures.account("a", "alice@example.test")])
        _ = state.handle(.key(.down))
        let text = screen(state).1.joined(separator: "\n")
        #expect(text.contains("Issuer         http://127.0.0.1:8000/a"))
        #expect(text.contains("Redirect URI   http://127.0.0.1:PORT/oauth2redirect/a"))
        #expect(text.contains("Scopes         openid email"))
        #expect(text.contains("Refresh token  yes"))
        #expect(text.contains("Expires        2023-11-14T23:13:20Z (in 1h 00m)"))
    }

    @Test("the detail pane has a line per AWS role kept with the account, soonest to expire first, with its expiry")
    func detailPaneAWSRoles() {
        var account = Fixtures.account("a", "alice@example.test")
        account.awsRoles = [
            AccountSummary.AWSRole(
                roleARN: "arn:aws:iam::123456789012:role/old", sessionName: "alice", expiresAt: Fixtures.now.addingTimeInterval(-60)),
            AccountSummary.AWSRole(
                roleARN: "arn:aws:iam::123456789012:role/deploy", sessionName: "alice\u{1B}[2J",
                expiresAt: Fixtures.now.addingTimeInterval(3300)),
        ]
        var state = Fixtures.state(accounts: [account], size: TerminalSize(rows: 24, columns: 120))
        _ = state.handle(.key(.down))
        let lines = screen(state).1
        #expect(lines.contains { $0.contains("AWS role       expired  arn:aws:iam::123456789012:role/old as alice") })
        #expect(lines.contains { $0.contains("AWS role       expires in 55m 00s  arn:aws:iam::123456789012:role/deploy as alice\\x1B[2J") })
        #expect(lines.contains { $0.contains("Last error") }, "the account's own fields stay")
    }

    @Test("escape sequences in an error description are drawn as inert text")
    func escapesAreInert() {
        var state = Fixtures.state(accounts: [
            Fixtures.account("a", "alice\u{1B}]2;pwned\u{07}@example.test", lastError: "bad\u{1B}[2J\u{9B}31m thing")
        ])
        _ = state.handle(.key(.down))
        let (terminal, lines) = screen(state)
        for run in terminal.styledRuns {
            #expect(!run.text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        }
        #expect(lines.joined().contains("bad\\x1B[2J\\x9B31m thing"))
    }

    @Test("the sign-in screen shows the URL whole as an OSC 8 link, the listening address and a spinner")
    func signInScreen() {
        var state = Fixtures.state(size: TerminalSize(rows: 24, columns: 60))
        _ = state.handle(.key(.enter))
        let url = "http://127.0.0.1:8000/o/authorize/?" + String(repeating: "state=abc&", count: 12) + "end=1"
        _ = state.handle(
            .signIn(
                .authorizationStarted(
                    url: URL(string: url)!, redirectURI: "http://127.0.0.1:4242/oauth2redirect/a", listeningOn: ["127.0.0.1:4242"])))
        let (terminal, lines) = screen(state)
        #expect(lines.contains { $0.contains("Opening your browser") })
        let frame = Renderer.render(state)
        #expect(frame.links.map(\.text).joined() == url, "the pieces join up to the whole URL")
        #expect(frame.links.allSatisfy { $0.url == url })
        #expect(frame.links.count > 1)
        #expect(terminal.controlSequences.joined().contains("\u{1B}]8;id=latchkey;\(url)\u{1B}\\"))
        #expect(lines.contains { $0.contains("Listening on 127.0.0.1:4242") })
        #expect(lines.last!.contains("Esc cancel"))
        let before = lines.first { $0.contains("Opening") }!
        _ = state.handle(.tick(Fixtures.now))
        #expect(screen(state).1.first { $0.contains("Opening") } != before, "the spinner turns every tick")
    }

    @Test("the copied token goes out only as OSC 52 and is never drawn")
    func tokenNeverDrawn() {
        var state = Fixtures.state(accounts: [Fixtures.account("a", "alice@example.test")])
        _ = state.handle(.key(.down))
        let terminal = RecordingTerminal(size: state.size, keys: [.character("c")])
        let inbox = Inbox()
        let token = "fake-token-do-not-draw"
        var performed: [Effect] = []
        let id = state.accounts[0].id
        _ = Screen.loop(state: &state, driver: terminal, inbox: inbox, clock: { Fixtures.now }, maximumTicks: 3) { effect in
            performed.append(effect)
            if case .copyToken = effect { inbox.post(.tokenReady(id, Secret(token))) }
            if case .writeClipboard(let secret) = effect { terminal.writeControlSequence(Painter.clipboard(secret.exposedValue)) }
        }
        #expect(performed.contains(.writeClipboard(Secret(token))))
        #expect(terminal.controlSequences.contains("\u{1B}]52;c;\(Data(token.utf8).base64EncodedString())\u{07}"))
        #expect(!terminal.frames.joined().joined().contains(token))
    }

    @Test("the unlock prompt shows one dot per typed character and never the passphrase")
    func unlockMasked() {
        var state = AppState(
            providers: [], now: Fixtures.now, size: TerminalSize(rows: 24, columns: 80),
            unlock: UnlockPrompt(vaultPath: "/home/me/.local/share/latchkey/vault", creating: false))
        for character in "hunter2" { _ = state.handle(.key(.character(character))) }
        let lines = screen(state).1
        #expect(lines.contains { $0.contains("Passphrase for the vault: •••••••") })
        #expect(!lines.joined().contains("hunter2"))
        #expect(lines[0].contains("vault locked"))
    }

    @Test("text is wrapped at spaces; a word is broken only when it is longer than a line, a code never")
    func wordWrapping() {
        #expect(DisplayWidth.wordWrapped("Phone app shows 961234", to: 18) == ["Phone app shows", "961234"])
        #expect(DisplayWidth.wordWrapped("code 961234 now", to: 6) == ["code", "961234", "now"])
        #expect(DisplayWidth.wordWrapped("see http://idp/abcdefgh", to: 8) == ["see", "http://i", "dp/abcde", "fgh"])
        #expect(DisplayWidth.wordWrapped("ログイン テスト", to: 8) == ["ログイン", "テスト"], "by cells, not characters")
        for width in 1...30 {
            let text = "Enter the code your authenticator app shows for Phone app, 961234."
            let rows = DisplayWidth.wordWrapped(text, to: width)
            #expect(rows.allSatisfy { DisplayWidth.of($0) <= width })
            #expect(rows.joined(separator: width < 7 ? "" : " ").contains("961234") || width < 7)
        }
    }

    @Test("a release question longer than the window is wrapped above the footer, the body giving up the rows")
    func longQuestionWrapped() throws {
        var state = Fixtures.state(accounts: [Fixtures.account("a", "alice@example.test")])
        let waiting = WaitingRelease(
            id: 3, account: "a:alice@example.test", requester: "forwarded from build-host.example.test: `git` pid 4242 (credential helper)",
            forwarded: true, expiresAt: 0)
        _ = state.handle(.releaseWaiting(waiting))
        let lines = screen(state).1
        #expect(lines.count == 24)
        let start = try #require(lines.firstIndex { $0.contains("Release a token") })
        let question = lines[start..<23].joined(separator: " ").split(separator: " ").joined(separator: " ")
        #expect(
            question
                == "Release a token of a:alice@example.test to forwarded from build-host.example.test: `git` pid 4242 "
                + "(credential helper)? y/n (refused in 0 s)")
        #expect(lines[23].contains("y release"))
    }
}
