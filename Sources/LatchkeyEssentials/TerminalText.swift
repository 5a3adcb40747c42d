/// Text from servers and configuration made safe to print in a terminal.
///
/// Error descriptions, display names and hints are attacker-controlled: an ESC or C1 control
/// character could retitle the window, clear the screen or hide what follows. Every control
/// character (C0, DEL, C1) and the Unicode bidirectional overrides are replaced by a visible
/// `\u{FFFD}`-free escape (`\x1b` style), so the text stays readable and inert.
public enum TerminalText {
    /// Returns `text` with every control character shown as a `\xNN` / `\u{NNNN}` escape.
    public static func sanitized(_ text: String, maxLength: Int = 2_000) -> String {
        var output = ""
        output.reserveCapacity(min(text.unicodeScalars.count, maxLength))
        var emitted = 0
        for scalar in text.unicodeScalars {
            if emitted >= maxLength {
                output += "…"
                break
            }
            if isInert(scalar) {
                output.unicodeScalars.append(scalar)
            } else if scalar.value < 0x100 {
                output += "\\x" + hex(scalar.value, width: 2)
            } else {
                output += "\\u{" + hex(scalar.value, width: 4) + "}"
            }
            emitted += 1
        }
        return output
    }

    /// Lines for a terminal: every line of `text` sanitized whole (no length limit: an
    /// authorization URL may be long), keeping its line breaks and tabs, so a message can be
    /// written as composed and still show no escape sequence that came from outside.
    public static func sanitizedLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).map { sanitized(String($0), maxLength: .max) }
                .joined(separator: "\t")
        }.joined(separator: "\n")
    }

    private static func isInert(_ scalar: Unicode.Scalar) -> Bool { !isControl(scalar) }

    /// C0, DEL and C1 controls, and the bidirectional marks that can reorder what the reader sees.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidirectional embeddings, overrides and isolates can reorder what the reader sees.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
