/// A terminal that only remembers: the cells of the last flushed frame, every control sequence
/// and every beep. Rendering and key handling are tested against it without a terminal.
public final class RecordingTerminal: TerminalDriver {
    public var size: TerminalSize
    /// Keys `readKey` hands out, first to last.
    public var pendingKeys: [Key]
    public private(set) var frames: [[String]] = []
    public private(set) var styledRuns: [(row: Int, column: Int, text: String, style: TextStyle)] = []
    public private(set) var controlSequences: [String] = []
    public private(set) var beeps = 0
    private var cells: [[String]]

    public init(size: TerminalSize, keys: [Key] = []) {
        self.size = size
        self.pendingKeys = keys
        cells = Self.blank(size)
    }

    /// The last flushed frame, one string per row with trailing blanks removed.
    public var screen: [String] { frames.last ?? [] }

    public func clear() {
        cells = Self.blank(size)
        styledRuns = []
    }

    public func draw(_ text: String, row: Int, column: Int, style: TextStyle) {
        guard row >= 0, row < size.rows else { return }
        styledRuns.append((row, column, text, style))
        var position = column
        for character in text {
            let width = DisplayWidth.of(character)
            guard position + width <= size.columns else { break }
            cells[row][position] = String(character)
            // A wide character covers the next cell too, as in a real terminal.
            if width == 2 { cells[row][position + 1] = "" }
            position += width
        }
    }

    public func flush() {
        frames.append(
            cells.map { row in
                var line = row.joined()
                while line.hasSuffix(" ") { line.removeLast() }
                return line
            })
    }

    public func writeControlSequence(_ sequence: String) { controlSequences.append(sequence) }

    public func readKey(timeoutMilliseconds: Int) -> Key? {
        pendingKeys.isEmpty ? nil : pendingKeys.removeFirst()
    }

    public func beep() { beeps += 1 }

    private static func blank(_ size: TerminalSize) -> [[String]] {
        Array(repeating: Array(repeating: " ", count: max(size.columns, 0)), count: max(size.rows, 0))
    }
}
