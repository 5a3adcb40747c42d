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
///
/// A hostile review (issue 16) found three more ways a file could hurt every command: toml++ and
/// TOMLKit recurse once per level of a dotted key, so a key of half a million segments overflowed
/// the stack (a crash of every command when it is config.toml); thousands of keys made the
/// reader quadratic (48 s for 125 KB); and an escaped NUL (`"\u0000"`) is cut there by TOMLKit,
/// so `"evil.example\u0000.good.example"` read as another host. So the text is bounded before the
/// library sees it: at most `maximumBytes`, `maximumDepth` levels of arrays, inline tables and
/// dotted keys, `maximumKeys` keys, and no NUL, written or escaped, in any string.
package enum TOMLPreflight {
    package struct Problem: Equatable {
        package var line: Int
        package var message: String
    }

    /// Provider files and config.toml are a few KB; the largest preset, comments included, is under 4 KB.
    static let maximumBytes = 64 << 10
    /// Provider files nest at most two levels (`extra_authorization_params = { … }`, arrays of strings).
    static let maximumDepth = 16
    /// A provider file has about twenty keys.
    static let maximumKeys = 512

    package static func problem(in text: String) -> Problem? {
        if text.utf8.count > maximumBytes {
            return Problem(line: 1, message: "is larger than \(maximumBytes >> 10) KiB; provider files and config.toml are a few KB")
        }
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
        return structureProblem(in: Array(text.unicodeScalars))
    }

    /// `}` where an array expects a value, nesting beyond `maximumDepth`, more than
    /// `maximumKeys` keys, and NUL escapes, found in one pass over the text as TOML values are written.
    static func structureProblem(in text: [Unicode.Scalar]) -> Problem? {
        var scanner = Scanner(text: text)
        return scanner.run()
    }

    /// The line of a `}` right after an array's `[` or one of its commas, outside strings and
    /// comments, if the text has no other problem first.
    static func braceWhereArrayValueGoes(in text: [Unicode.Scalar]) -> Int? {
        guard let problem = structureProblem(in: text), problem.message == Scanner.braceMessage else { return nil }
        return problem.line
    }

    /// One pass over the text, outside strings and comments, keeping what a TOML reader would be
    /// in: the open arrays and inline tables of the value being read, whether a key's `=` came
    /// yet, and how many segments the key being read has.
    struct Scanner {
        static let braceMessage = "not valid TOML: `}` where the array expects a value or `]`"

        let text: [Unicode.Scalar]
        var index = 0
        var line = 1
        /// The `[` and `{` of the value being read.
        var open: [Unicode.Scalar] = []
        /// Right after an array's `[` or one of its commas.
        var valueExpected = false
        /// Reading a key: at the start of a line outside a value, or after an inline table's `{` or `,`.
        var inKey = true
        var keySegments = 1
        var keys = 0

        init(text: [Unicode.Scalar]) { self.text = text }

        mutating func run() -> Problem? {
            while index < text.count {
                let scalar = text[index]
                switch scalar {
                case "\n":
                    line += 1
                    if open.isEmpty { startKey() }
                case "#":
                    skipRestOfLine()
                case "\"", "'":
                    let start = index
                    index = endOfString(in: text, from: start)
                    if text[start] == "\"", containsEscapedNUL(text[start..<index]) {
                        return Problem(line: line, message: "a string holds an escaped NUL (\\u0000), which would cut it short")
                    }
                    line += text[start..<index].count { $0 == "\n" }
                    valueExpected = false
                    continue
                case "=":
                    if inKey {
                        inKey = false
                        keys += 1
                        if keys > TOMLPreflight.maximumKeys {
                            return Problem(line: line, message: "has more than \(TOMLPreflight.maximumKeys) keys")
                        }
                    }
                    valueExpected = false
                case "." where inKey:
                    keySegments += 1
                    if keySegments > TOMLPreflight.maximumDepth {
                        return Problem(line: line, message: "a key has more than \(TOMLPreflight.maximumDepth) dotted parts")
                    }
                case "[" where open.isEmpty && inKey:
                    // A table header: its dotted parts count like a key's.
                    if let problem = header() { return problem }
                    continue
                case "[", "{":
                    open.append(scalar)
                    if open.count > TOMLPreflight.maximumDepth {
                        return Problem(line: line, message: "nests arrays and inline tables more than \(TOMLPreflight.maximumDepth) deep")
                    }
                    valueExpected = scalar == "["
                    if scalar == "{" { startKey() }
                case "}" where valueExpected:
                    return Problem(line: line, message: Self.braceMessage)
                case "]", "}":
                    _ = open.popLast()
                    valueExpected = false
                case ",":
                    valueExpected = open.last == "["
                    if open.last == "{" { startKey() }
                case " ", "\t", "\r":
                    break
                default:
                    valueExpected = false
                }
                index += 1
            }
            return nil
        }

        private mutating func startKey() {
            inKey = true
            keySegments = 1
        }

        /// Comments: nothing in them opens a value.
        private mutating func skipRestOfLine() {
            while index + 1 < text.count && text[index + 1] != "\n" { index += 1 }
        }

        /// `[a.b]` or `[[a.b]]` up to the end of its line: counts its parts (quoted parts may hold
        /// dots), and leaves the index on the line's end.
        private mutating func header() -> Problem? {
            keys += 1
            var segments = 1
            while index < text.count && text[index] != "\n" {
                switch text[index] {
                case "\"", "'":
                    index = endOfString(in: text, from: index)
                    continue
                case ".":
                    segments += 1
                    if segments > TOMLPreflight.maximumDepth {
                        return Problem(line: line, message: "a table header has more than \(TOMLPreflight.maximumDepth) dotted parts")
                    }
                case "#":
                    skipRestOfLine()
                default:
                    break
                }
                index += 1
            }
            if keys > TOMLPreflight.maximumKeys { return Problem(line: line, message: "has more than \(TOMLPreflight.maximumKeys) keys") }
            return nil
        }
    }

    /// `\u0000` or `\U00000000` in a basic string: TOMLKit hands strings on as C strings.
    private static func containsEscapedNUL(_ string: ArraySlice<Unicode.Scalar>) -> Bool {
        var index = string.startIndex
        while index < string.endIndex {
            guard string[index] == "\\" else {
                index += 1
                continue
            }
            let next = string.index(after: index)
            guard next < string.endIndex else { return false }
            let digits = string[next] == "u" ? 4 : string[next] == "U" ? 8 : 0
            if digits > 0, let end = string.index(next, offsetBy: digits + 1, limitedBy: string.endIndex),
                string[string.index(after: next)..<end].allSatisfy({ $0 == "0" })
            {
                return true
            }
            index = string.index(index, offsetBy: 2, limitedBy: string.endIndex) ?? string.endIndex
        }
        return false
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
