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
///
/// The long fuzz run found one more (2026-11-23): `}` where an array expects its next value
/// (`ports = [}`, `[1, }`) reaches toml++'s `parse_value`, which asserts that a value never
/// starts with a terminator; an optimised build without assertions assumes it instead. So the
/// text is also scanned as TOML values are written (strings, comments, brackets) for that `}`.
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
        return braceWhereArrayValueGoes(in: Array(text.unicodeScalars)).map {
            Problem(line: $0, message: "not valid TOML: `}` where the array expects a value or `]`")
        }
    }

    /// The line of a `}` right after an array's `[` or one of its commas, outside strings and
    /// comments. Table headers (a `[` before any `=` on a line outside a value) are skipped.
    static func braceWhereArrayValueGoes(in text: [Unicode.Scalar]) -> Int? {
        var line = 1
        var open: [Unicode.Scalar] = []  // the `[` and `{` of the value being read
        var valueExpected = false  // right after an array's `[` or a comma inside an array
        var assigned = false  // an `=` outside any value on this line
        var index = 0
        /// Comments and table headers: nothing in them opens a value.
        func skipRestOfLine() { while index + 1 < text.count && text[index + 1] != "\n" { index += 1 } }
        while index < text.count {
            let scalar = text[index]
            switch scalar {
            case "\n":
                line += 1
                if open.isEmpty { assigned = false }
            case "#":
                skipRestOfLine()
            case "\"", "'":
                let end = endOfString(in: text, from: index)
                line += text[index..<end].count { $0 == "\n" }
                index = end
                valueExpected = false
                continue
            case "=":
                if open.isEmpty { assigned = true }
                valueExpected = false
            case "[" where open.isEmpty && !assigned:
                skipRestOfLine()
            case "[", "{":
                open.append(scalar)
                valueExpected = scalar == "["
            case "}" where valueExpected:
                return line
            case "]", "}":
                _ = open.popLast()
                valueExpected = false
            case ",":
                valueExpected = open.last == "["
            case " ", "\t", "\r":
                break
            default:
                valueExpected = false
            }
            index += 1
        }
        return nil
    }

    /// Where the string opening at `start` ends (the index after its closing quote, or the end of
    /// the line for one left open): basic and literal, one-line and multi-line.
    private static func endOfString(in text: [Unicode.Scalar], from start: Int) -> Int {
        let quote = text[start]
        let isMultiLine = start + 2 < text.count && text[start + 1] == quote && text[start + 2] == quote
        var index = start + (isMultiLine ? 3 : 1)
        while index < text.count {
            let scalar = text[index]
            if scalar == "\\" && quote == "\"" {
                index += 2
                continue
            }
            if scalar == "\n" && !isMultiLine { return index }
            if scalar == quote {
                if !isMultiLine { return index + 1 }
                if index + 2 < text.count && text[index + 1] == quote && text[index + 2] == quote { return index + 3 }
            }
            index += 1
        }
        return text.count
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
