import LatchkeyEssentials
import Testing

@testable import LatchkeyVault

@Suite("Text made safe for the terminal")
struct TerminalTextTests {
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
            default: return false
            }
        }
    }

    @Test("C0 controls, DEL and C1 controls are shown as visible escapes")
    func controlCharacters() {
        let hostile = "\u{1B}]0;owned\u{07}\u{1B}[2Jclear\u{7F}\u{9B}31m\r\n\t\u{00}"
        let safe = TerminalText.sanitized(hostile)
        #expect(!Self.hasControl(safe))
        #expect(safe == "\\x1B]0;owned\\x07\\x1B[2Jclear\\x7F\\x9B31m\\x0D\\x0A\\x09\\x00")
    }

    @Test("bidirectional overrides and isolates are shown as escapes")
    func bidiOverrides() {
        let safe = TerminalText.sanitized("invoice\u{202E}fdp.exe\u{2066}x\u{2069}\u{200F}\u{061C}")
        #expect(!Self.hasControl(safe))
        #expect(safe.hasPrefix("invoice\\u{202E}fdp.exe\\u{2066}x\\u{2069}"))
    }

    @Test("Japanese, emoji and accented text pass through unchanged")
    func printableUnicode() {
        let text = "ログインしました 👩🏽‍💻 ✅ Zoë 東京 café"
        #expect(TerminalText.sanitized(text) == text)
    }

    @Test("long text is cut at maxLength with an ellipsis")
    func truncation() {
        #expect(TerminalText.sanitized(String(repeating: "a", count: 50), maxLength: 10) == String(repeating: "a", count: 10) + "…")
        #expect(TerminalText.sanitized("short", maxLength: 10) == "short")
    }
}
