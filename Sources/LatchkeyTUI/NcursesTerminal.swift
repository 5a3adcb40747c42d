import CNcursesw
import Glibc
import LatchkeyEssentials
import LatchkeyVault

/// The real terminal, through ncursesw. Create it, use it and close it on one thread: the
/// process's main thread, which is where SIGWINCH lands (see docs/ncurses-from-swift.md §6).
public final class NcursesTerminal: TerminalDriver {
    private var screen: OpaquePointer?
    private let window: UnsafeMutablePointer<WINDOW>
    private let output: UnsafeMutablePointer<FILE>
    private let input: UnsafeMutablePointer<FILE>
    private let attributes: [TextStyle: attr_t]
    /// Whether colours are used (a colour terminal and no `NO_COLOR`).
    public let usesColor: Bool
    /// A pipe whose write end wakes `readKey` (see `waker`).
    private let wakePipe: (read: Int32, write: Int32)
    /// Call from any thread to end the current wait for a key early, so work finished off the
    /// terminal's thread (the vault opened, a sign-in step) is drawn at once, not at the next tick.
    public let waker: @Sendable () -> Void

    /// Opens ncurses on the given descriptors (they stay open; duplicates are used).
    ///
    /// `terminalType` nil means `$TERM`. An unknown type, or descriptors that are not a terminal,
    /// give `ScreenError` instead of exiting (which `initscr` would do).
    public init(
        terminalType: String? = nil, inputDescriptor: Int32 = 0, outputDescriptor: Int32 = 1,
        noColor: Bool = false
    ) throws(ScreenError) {
        guard isatty(inputDescriptor) == 1, isatty(outputDescriptor) == 1 else { throw .notATerminal }
        TerminalLocale.prepare()
        guard let output = fdopen(dup(outputDescriptor), "w") else { throw .notATerminal }
        guard let input = fdopen(dup(inputDescriptor), "r") else {
            fclose(output)
            throw .notATerminal
        }
        let opened: OpaquePointer? =
            if let terminalType { terminalType.withCString { newterm($0, output, input) } } else { newterm(nil, output, input) }
        guard let opened else {
            fclose(output)
            fclose(input)
            throw .unknownTerminal(terminalType ?? getenv("TERM").map { String(cString: $0) } ?? "")
        }
        set_term(opened)
        guard let window = nc_stdscr() else {
            delscreen(opened)
            fclose(output)
            fclose(input)
            throw .notATerminal
        }
        screen = opened
        self.window = window
        self.output = output
        self.input = input
        cbreak()
        noecho()
        nonl()
        keypad(window, true)
        curs_set(0)
        set_escdelay(25)
        usesColor = !noColor && has_colors()
        attributes = Self.attributes(color: usesColor)
        var descriptors: [Int32] = [-1, -1]
        if pipe(&descriptors) == 0 {
            for descriptor in descriptors {
                _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            }
        } else {
            descriptors = [-1, -1]
        }
        wakePipe = (descriptors[0], descriptors[1])
        let writeEnd = descriptors[1]
        waker = {
            guard writeEnd >= 0 else { return }
            var byte: UInt8 = 1
            _ = Glibc.write(writeEnd, &byte, 1)
        }
    }

    /// Leaves curses mode and restores the terminal; safe to call more than once.
    public func close() {
        guard let screen else { return }
        endwin()
        delscreen(screen)
        fclose(output)
        fclose(input)
        for descriptor in [wakePipe.read, wakePipe.write] where descriptor >= 0 { Glibc.close(descriptor) }
        self.screen = nil
    }

    deinit { close() }

    public var size: TerminalSize {
        var rows: Int32 = 0
        var columns: Int32 = 0
        nc_getmaxyx(window, &rows, &columns)
        return TerminalSize(rows: Int(rows), columns: Int(columns))
    }

    public func clear() { werase(window) }

    public func draw(_ text: String, row: Int, column: Int, style: TextStyle) {
        nc_wattrset(window, attributes[style] ?? nc_a_normal())
        // Writing into the bottom-right cell returns ERR (the cursor cannot move past it) but draws.
        _ = mvwaddstr(window, Int32(row), Int32(column), text)
        nc_wattrset(window, nc_a_normal())
    }

    public func flush() { wrefresh(window) }

    public func writeControlSequence(_ sequence: String) { _ = nc_write_raw(output, sequence) }

    /// Waits for a key or the waker, whichever comes first. The wait is `poll` on the terminal and
    /// the wake pipe; ncurses then decodes what arrived (a resize interrupts the poll and is read
    /// as `KEY_RESIZE`).
    public func readKey(timeoutMilliseconds: Int) -> Key? {
        guard timeoutMilliseconds > 0, wakePipe.read >= 0 else { return key(waiting: timeoutMilliseconds) }
        if let key = key(waiting: 0) { return key }
        var descriptors = [
            pollfd(fd: fileno(input), events: Int16(POLLIN), revents: 0), pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&descriptors, 2, Int32(timeoutMilliseconds))
        if descriptors[1].revents != 0 {
            var buffer = [UInt8](repeating: 0, count: 64)
            while Glibc.read(wakePipe.read, &buffer, buffer.count) > 0 {}
        }
        guard ready < 0 || descriptors[0].revents != 0 else { return nil }
        // The bytes are there (or a signal came): a short wait lets an escape sequence complete.
        return key(waiting: 10)
    }

    private func key(waiting timeoutMilliseconds: Int) -> Key? {
        wtimeout(window, Int32(timeoutMilliseconds))
        var character: wint_t = 0
        switch wget_wch(window, &character) {
        case KEY_CODE_YES: return Self.functionKey(Int32(bitPattern: character))
        case OK: return Unicode.Scalar(character).map(Self.characterKey)
        default: return nil
        }
    }

    public func beep() { _ = CNcursesw.beep() }

    // MARK: - Decoding

    static func functionKey(_ code: Int32) -> Key {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_ENTER: return .enter
        case KEY_BACKSPACE: return .backspace
        case KEY_RESIZE: return .resize
        default: return .other(code)
        }
    }

    static func characterKey(_ scalar: Unicode.Scalar) -> Key {
        switch scalar.value {
        case 0x0A, 0x0D: return .enter
        case 0x1B: return .escape
        case 0x7F, 0x08: return .backspace
        case 0x09: return .tab
        default: return .character(Character(scalar))
        }
    }

    // MARK: - Styles

    private enum Pair: Int16, CaseIterable {
        case header = 1, good, warning, error, accent, qrCode
    }

    /// Colours on the terminal's own background (`use_default_colors`), or attributes only.
    private static func attributes(color: Bool) -> [TextStyle: attr_t] {
        var map: [TextStyle: attr_t] = [
            .normal: nc_a_normal(), .header: nc_a_reverse() | nc_a_bold(), .selected: nc_a_reverse(),
            .dim: nc_a_dim(), .good: nc_a_normal(), .warning: nc_a_bold(), .error: nc_a_bold(), .accent: nc_a_bold(),
            .link: nc_a_underline(), .qrCode: nc_a_normal(),
        ]
        guard color, start_color() == OK else { return map }
        use_default_colors()
        let colors: [(Pair, Int32, Int32)] = [
            (.header, COLOR_BLACK, COLOR_CYAN), (.good, COLOR_GREEN, -1), (.warning, COLOR_YELLOW, -1),
            (.error, COLOR_RED, -1), (.accent, COLOR_CYAN, -1), (.qrCode, COLOR_WHITE, COLOR_BLACK),
        ]
        for (pair, foreground, background) in colors { init_pair(pair.rawValue, Int16(foreground), Int16(background)) }
        map[.header] = nc_color_pair(Pair.header.rawValue) | nc_a_bold()
        map[.good] = nc_color_pair(Pair.good.rawValue)
        map[.warning] = nc_color_pair(Pair.warning.rawValue)
        map[.error] = nc_color_pair(Pair.error.rawValue) | nc_a_bold()
        map[.accent] = nc_color_pair(Pair.accent.rawValue) | nc_a_bold()
        map[.link] = nc_color_pair(Pair.accent.rawValue) | nc_a_underline()
        map[.qrCode] = nc_color_pair(Pair.qrCode.rawValue)
        return map
    }
}

/// Why the full screen could not start; the command line falls back to plain output.
public struct ScreenError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case notATerminal
        case unknownTerminal(String)
    }

    private let code: Code

    public static let notATerminal = ScreenError(code: .notATerminal)
    public static func unknownTerminal(_ name: String) -> ScreenError { ScreenError(code: .unknownTerminal(name)) }

    public var description: String {
        switch code {
        case .notATerminal:
            return "the screen needs a terminal on stdin and stdout"
        case .unknownTerminal(let name):
            return name.isEmpty
                ? "TERM is not set, so the screen cannot draw"
                : "the terminal type \"\(TerminalText.sanitized(name, maxLength: 80))\" is unknown here (no terminfo entry), so the screen cannot draw"
        }
    }
}
