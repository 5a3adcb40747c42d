import CNcursesw
import Foundation
import Glibc
import Testing

@testable import LatchkeyTUI

/// A pseudo-terminal: the screen draws on the slave side; the test reads and types on the master.
final class Pty {
    let master: Int32
    let slave: Int32

    init(rows: UInt16 = 24, columns: UInt16 = 80) {
        var master: Int32 = -1
        var slave: Int32 = -1
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        precondition(openpty(&master, &slave, nil, nil, &size) == 0, "openpty failed")
        self.master = master
        self.slave = slave
    }

    deinit {
        close(master)
        close(slave)
    }

    func type(_ bytes: String) {
        _ = bytes.withCString { write(master, $0, strlen($0)) }
    }

    /// Everything the program wrote so far (waits briefly for more).
    func output() -> String {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, 200) > 0 {
            let count = read(master, &buffer, buffer.count)
            if count <= 0 { break }
            collected += buffer[0..<count]
        }
        return String(decoding: collected, as: UTF8.self)
    }
}

/// Real ncurses on a pty in this process. Serialized: ncurses is one global, not thread-safe.
@Suite("ncursesw on a pseudo-terminal", .serialized)
struct PtyTerminalTests {
    @Test("a frame with Japanese text and colours reaches the terminal, sized from the pty")
    func drawsFrame() throws {
        let pty = Pty(rows: 24, columns: 80)
        let terminal = try NcursesTerminal(terminalType: "xterm-256color", inputDescriptor: pty.slave, outputDescriptor: pty.slave)
        defer { terminal.close() }
        #expect(terminal.size == TerminalSize(rows: 24, columns: 80))
        #expect(terminal.usesColor)
        let state = Fixtures.state(
            providers: [Fixtures.provider("jp", displayName: "ログイン 日本")], size: terminal.size)
        Painter(driver: terminal).paint(Renderer.render(state))
        let output = pty.output()
        #expect(output.contains("ログイン 日本"))
        #expect(output.contains("\u{1B}[3"), "colour escape codes are sent")
    }

    @Test("NO_COLOR draws with attributes only: no colour codes at all")
    func noColor() throws {
        let pty = Pty()
        let terminal = try NcursesTerminal(
            terminalType: "xterm-256color", inputDescriptor: pty.slave, outputDescriptor: pty.slave, noColor: true)
        defer { terminal.close() }
        #expect(!terminal.usesColor)
        Painter(driver: terminal).paint(Renderer.render(Fixtures.state(size: terminal.size)))
        let output = pty.output()
        #expect(output.contains("IdP A"))
        let colour = try Regex("\u{1B}\\[[0-9;]*(3[0-79]|4[0-79]|38;|48;)[0-9;]*m")
        #expect(output.firstMatch(of: colour) == nil)
    }

    @Test("arrow keys, Enter, Esc and wide characters are decoded")
    func readsKeys() throws {
        let pty = Pty()
        let terminal = try NcursesTerminal(terminalType: "xterm-256color", inputDescriptor: pty.slave, outputDescriptor: pty.slave)
        defer { terminal.close() }
        terminal.flush()
        _ = pty.output()
        pty.type("\u{1B}OBkあ\r")
        #expect(terminal.readKey(timeoutMilliseconds: 2000) == .down)
        #expect(terminal.readKey(timeoutMilliseconds: 2000) == .character("k"))
        #expect(terminal.readKey(timeoutMilliseconds: 2000) == .character("あ"))
        #expect(terminal.readKey(timeoutMilliseconds: 2000) == .enter)
        pty.type("\u{1B}")
        #expect(terminal.readKey(timeoutMilliseconds: 2000) == .escape)
        #expect(terminal.readKey(timeoutMilliseconds: 50) == nil)
    }

    @Test("a post to the inbox ends the wait for a key at once, so async results are drawn without waiting for a tick")
    func inboxWakesTheLoop() throws {
        let pty = Pty()
        let terminal = try NcursesTerminal(terminalType: "xterm-256color", inputDescriptor: pty.slave, outputDescriptor: pty.slave)
        defer { terminal.close() }
        let inbox = Inbox(waker: terminal.waker)
        let clock = ContinuousClock()
        let started = clock.now
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.05)
            inbox.post(.failed("done"))
        }
        #expect(terminal.readKey(timeoutMilliseconds: 5000) == nil)
        #expect(clock.now - started < .seconds(2), "woken by the post, not by the 5 s timeout")
        #expect(inbox.drain().count == 1)
        pty.type("j")
        #expect(terminal.readKey(timeoutMilliseconds: 2000) == .character("j"), "keys still arrive after a wake")
    }

    @Test("a window resize arrives as a resize key with the new size")
    func resize() throws {
        let pty = Pty(rows: 24, columns: 80)
        let terminal = try NcursesTerminal(terminalType: "xterm-256color", inputDescriptor: pty.slave, outputDescriptor: pty.slave)
        defer { terminal.close() }
        terminal.flush()
        _ = nc_set_winsize(pty.master, 12, 40)
        // The pty is not this process's controlling terminal, so no SIGWINCH: tell ncurses directly.
        resizeterm(12, 40)
        #expect(terminal.readKey(timeoutMilliseconds: 2000) == .resize)
        #expect(terminal.size == TerminalSize(rows: 12, columns: 40))
    }

    @Test("an unknown terminal type is an error to fall back on, not an exit")
    func unknownTerminal() {
        let pty = Pty()
        #expect(throws: ScreenError.unknownTerminal("nosuchterm")) {
            try NcursesTerminal(terminalType: "nosuchterm", inputDescriptor: pty.slave, outputDescriptor: pty.slave)
        }
    }

    @Test("closing restores the terminal's settings")
    func restoresTerminal() throws {
        let pty = Pty()
        var before = termios()
        tcgetattr(pty.slave, &before)
        let terminal = try NcursesTerminal(terminalType: "xterm-256color", inputDescriptor: pty.slave, outputDescriptor: pty.slave)
        var during = termios()
        tcgetattr(pty.slave, &during)
        #expect(during.c_lflag & tcflag_t(ICANON) == 0)
        terminal.close()
        var after = termios()
        tcgetattr(pty.slave, &after)
        #expect(after.c_lflag == before.c_lflag)
        #expect(after.c_iflag == before.c_iflag)
        #expect(after.c_oflag == before.c_oflag)
    }
}
