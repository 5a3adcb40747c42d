import CNcursesw
import Glibc

/// How many terminal cells text takes, from the C library's `wcwidth` (what ncurses itself uses),
/// so Japanese display names and the rest of a row line up.
public enum DisplayWidth {
    /// `wcwidth` answers -1 for everything outside ASCII until LC_CTYPE names a UTF-8 character
    /// set, so the locale is prepared once before the first measurement (see `TerminalLocale`).
    private static let localeReady: Bool = TerminalLocale.prepare()

    /// Cells taken by one character: 0 for combining marks, 2 for wide (CJK, most emoji).
    public static func of(_ character: Character) -> Int {
        // Only the base scalar decides: combining marks, joiners and variation selectors add nothing.
        guard let base = character.unicodeScalars.first else { return 0 }
        if base.value >= 0x20 && base.value < 0x7F { return 1 }
        _ = localeReady
        return max(Int(nc_wcwidth(wchar_t(bitPattern: base.value))), 0)
    }

    /// Cells taken by `text`.
    public static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// `text` cut to at most `width` cells, with "…" where it was cut.
    public static func truncated(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        guard of(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let cells = of(character)
            if used + cells > width - 1 { break }
            result.append(character)
            used += cells
        }
        return result + "…"
    }

    /// `text` cut or padded with spaces to exactly `width` cells.
    public static func fitted(_ text: String, to width: Int) -> String {
        let cut = truncated(text, to: width)
        return cut + String(repeating: " ", count: max(0, width - of(cut)))
    }

    /// `text` in lines of at most `width` cells, broken at spaces, for text a person must read
    /// whole to act on (a hint, a code, a help line): a word is broken only when it is longer
    /// than a line (an address), so a code or a word that fits a line is never split.
    public static func wordWrapped(_ text: String, to width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let candidate = current.isEmpty ? String(word) : current + " " + word
            if of(candidate) <= width {
                current = candidate
                continue
            }
            if !current.isEmpty { lines.append(current) }
            let pieces = wrapped(String(word), to: width)
            lines += pieces.dropLast()
            current = pieces.last ?? ""
        }
        if !current.isEmpty || lines.isEmpty { lines.append(current) }
        return lines
    }

    /// `text` split into pieces of at most `width` cells each, never splitting a character.
    public static func wrapped(_ text: String, to width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var current = ""
        var used = 0
        for character in text {
            let cells = of(character)
            if used + cells > width {
                lines.append(current)
                current = ""
                used = 0
            }
            current.append(character)
            used += cells
        }
        if !current.isEmpty || lines.isEmpty { lines.append(current) }
        return lines
    }
}

/// The process locale, set the way ncurses needs it.
public enum TerminalLocale {
    /// Sets the locale from the environment (LANG, LC_*), and if that is not UTF-8, switches
    /// character handling to C.UTF-8: without it ncurses draws boxes as `lqqk`, garbles wide text
    /// and swallows non-ASCII keys. Returns whether the character set is now UTF-8.
    @discardableResult
    public static func prepare() -> Bool {
        setlocale(LC_ALL, "")
        if isUTF8 { return true }
        setlocale(LC_CTYPE, "C.UTF-8")
        return isUTF8
    }

    static var isUTF8: Bool {
        guard let codeset = nc_codeset() else { return false }
        let name = String(cString: codeset).uppercased()
        return name == "UTF-8" || name == "UTF8"
    }
}
