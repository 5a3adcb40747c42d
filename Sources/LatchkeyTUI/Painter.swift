import Foundation

/// Draws frames on a driver, and the OSC 8 links over them.
public final class Painter {
    private let driver: any TerminalDriver
    private var lastFrame: Frame?

    public init(driver: any TerminalDriver) { self.driver = driver }

    /// Draws `frame` unless it is the one already on screen.
    public func paint(_ frame: Frame) {
        guard frame != lastFrame else { return }
        let linksChanged = frame.links != lastFrame?.links || frame.size != lastFrame?.size
        driver.clear()
        for (row, spans) in frame.lines.enumerated() {
            var column = 0
            for span in spans {
                driver.draw(span.text, row: row, column: column, style: span.style)
                column += DisplayWidth.of(span.text)
            }
        }
        driver.flush()
        // ncurses cannot store a link with a cell, so the same text is written again wrapped in
        // OSC 8 after the frame is out; ncurses never redraws unchanged cells, so the link stays.
        if linksChanged && !frame.links.isEmpty {
            driver.writeControlSequence(frame.links.map(Self.hyperlink).joined())
        }
        lastFrame = frame
    }

    /// Forgets what is on screen, so the next frame is drawn in full.
    public func invalidate() { lastFrame = nil }

    /// Save the cursor, move, open the link, the text, close the link, restore the cursor.
    static func hyperlink(_ link: Frame.Hyperlink) -> String {
        // The URL goes into the sequence as is, so only printable ASCII is allowed through.
        guard link.url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), link.text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            return ""
        }
        return
            "\u{1B}7\u{1B}[\(link.row + 1);\(link.column + 1)H\u{1B}]8;id=latchkey;\(link.url)\u{1B}\\\(link.text)\u{1B}]8;;\u{1B}\\\u{1B}8"
    }

    /// OSC 52: asks the terminal to put `text` on the clipboard (the terminal never shows it).
    static func clipboard(_ text: String) -> String {
        "\u{1B}]52;c;\(Data(text.utf8).base64EncodedString())\u{07}"
    }
}
