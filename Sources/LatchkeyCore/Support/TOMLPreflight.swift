/// Checks that TOMLKit (toml++ underneath) can be handed a text without aborting the process.
///
/// Fuzzing found that a table header whose key is not where toml++ expects one (`[#`, `[` then
/// control characters then `#`) trips an assertion inside toml++, which ends the process instead
/// of reporting a parse error; and TOMLKit cuts a text at its first NUL byte, so the rest would
/// be read silently as if absent. Both are refused here, with the line, before the parser sees
/// the text: control characters other than tab (TOML 1.0 forbids them anyway), and a line that
/// opens with `[` or `[[` without a key or a quote after it. Provider files and config.toml have
/// no nested arrays, the only other place such a line could appear.
///
/// Lines are split where toml++ splits them, on U+000A scalars: a Swift `Character` holds
/// `\r\n` as one, so splitting on characters missed every line of a CRLF file (which was then
/// refused whole for the `\n` inside it). toml++ skips a UTF-8 byte order mark before the first
/// line, so this does too: a BOM before `[#` hid the header from the check (found 2026-11-23).
enum TOMLPreflight {
    struct Problem: Equatable {
        var line: Int
        var message: String
    }

    static func problem(in text: String) -> Problem? {
        for (index, line) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.contains(where: isForbiddenControl) {
                return Problem(line: index + 1, message: "holds a control character (not valid TOML; is this a text file?)")
            }
            var rest = index == 0 && line.first == "\u{FEFF}" ? line.dropFirst() : line
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard rest.first == "[" else { continue }
            rest = rest.dropFirst()
            if rest.first == "[" { rest = rest.dropFirst() }
            guard let first = rest.first(where: { $0 != " " && $0 != "\t" }), startsKey(first) else {
                return Problem(line: index + 1, message: "not valid TOML: a table header must name a key")
            }
        }
        return nil
    }

    /// C0 controls other than tab and carriage return, and DEL.
    private static func isForbiddenControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t" && scalar != "\r") || scalar.value == 0x7F
    }

    /// A bare key character or a quote (TOML 1.0 §Keys).
    private static func startsKey(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_\"'".unicodeScalars.contains(scalar))
    }
}
