/// One screenful, ready to draw: exactly `size.rows` lines of styled text that each fit the width.
public struct Frame: Sendable, Equatable {
    /// A run of text in one style.
    public struct Span: Sendable, Equatable {
        public var text: String
        public var style: TextStyle

        public init(_ text: String, _ style: TextStyle = .normal) {
            self.text = text
            self.style = style
        }
    }

    /// Cells that also carry an OSC 8 hyperlink (the drawn text is the link's own address).
    public struct Hyperlink: Sendable, Equatable {
        public var row: Int
        public var column: Int
        public var text: String
        public var url: String
    }

    public var size: TerminalSize
    public var lines: [[Span]]
    public var links: [Hyperlink] = []

    /// The frame's text, one string per row, trailing blanks removed (for tests and benchmarks).
    public var text: [String] {
        lines.map { spans in
            var line = spans.map(\.text).joined()
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }
}

/// Builds one line within a width budget: spans that would overflow are cut with "…".
struct LineBuilder {
    let width: Int
    private(set) var spans: [Frame.Span] = []
    private(set) var used = 0

    init(width: Int) { self.width = width }

    var remaining: Int { max(0, width - used) }

    /// Appends `text`, cut to what is left of the line.
    mutating func append(_ text: String, _ style: TextStyle = .normal) {
        guard remaining > 0, !text.isEmpty else { return }
        let cut = DisplayWidth.truncated(text, to: remaining)
        spans.append(Frame.Span(cut, style))
        used += DisplayWidth.of(cut)
    }

    /// Appends `text` cut or padded to exactly `cells` (or what is left).
    mutating func append(_ text: String, cells: Int, _ style: TextStyle = .normal) {
        append(DisplayWidth.fitted(text, to: min(cells, remaining)), style)
    }

    /// Pads the rest of the line with spaces in `style` (a selected row is highlighted edge to edge).
    mutating func fill(_ style: TextStyle = .normal) {
        append(String(repeating: " ", count: remaining), style)
    }
}
