/// What the screen needs from a terminal: the ncurses implementation draws for real, the recording
/// one keeps what was drawn so tests can read it.
///
/// All calls come from one thread (ncurses is not thread-safe); the loop owns the driver.
public protocol TerminalDriver: AnyObject {
    /// The current size in cells.
    var size: TerminalSize { get }
    /// Blanks the whole screen (in the driver's buffer; nothing shows until `flush`).
    func clear()
    /// Draws `text` (already sanitized and fitted) starting at `row`, `column` (0-based cells).
    func draw(_ text: String, row: Int, column: Int, style: TextStyle)
    /// Shows what was drawn since the last flush.
    func flush()
    /// Writes a control sequence straight to the terminal, after the drawn frame (OSC 8, OSC 52).
    func writeControlSequence(_ sequence: String)
    /// Waits up to `milliseconds` for a key; `nil` when none came.
    func readKey(timeoutMilliseconds: Int) -> Key?
    func beep()
}

/// A terminal's size in character cells.
public struct TerminalSize: Sendable, Equatable, CustomStringConvertible {
    public var rows: Int
    public var columns: Int

    public init(rows: Int, columns: Int) {
        self.rows = rows
        self.columns = columns
    }

    /// The smallest window the screen draws in; anything smaller shows "make the window larger".
    public static let minimum = TerminalSize(rows: 12, columns: 40)

    public var isLargeEnough: Bool { rows >= Self.minimum.rows && columns >= Self.minimum.columns }

    public var description: String { "\(columns)×\(rows)" }
}

/// What a piece of text means; each driver decides how that looks (colour, or attributes only).
public enum TextStyle: Sendable, Equatable, CaseIterable {
    case normal
    case header
    case selected
    case dim
    case good
    case warning
    case error
    case accent
    case link
    /// QR code modules: light drawn on dark whatever the terminal's colours (see `QRCode.halfBlockLines`).
    case qrCode
}

/// One key press, decoded.
public enum Key: Sendable, Equatable {
    case character(Character)
    case up, down, left, right, home, end, pageUp, pageDown
    case enter, escape, backspace, tab
    /// The terminal changed size (ncurses' `KEY_RESIZE`).
    case resize
    /// A function key the screen does not use.
    case other(Int32)
}
