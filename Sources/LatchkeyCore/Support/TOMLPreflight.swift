/// Checks that TOMLKit (toml++ underneath) can be handed a text without aborting the process.
///
/// Fuzzing found that a table header opened by a comment (`[#`, `[[ #`) trips an assertion
/// inside toml++, which ends the process instead of reporting a parse error; and TOMLKit cuts a
/// text at its first NUL byte, so the rest would be read silently as if absent. Both are refused
/// here, with the line, before the parser sees the text.
enum TOMLPreflight {
    struct Problem: Equatable {
        var line: Int
        var message: String
    }

    static func problem(in text: String) -> Problem? {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.utf8.contains(0) { return Problem(line: index + 1, message: "not a text file (it holds a NUL byte)") }
            var rest = line.drop { $0 == " " || $0 == "\t" }
            guard rest.first == "[" else { continue }
            rest = rest.dropFirst()
            if rest.first == "[" { rest = rest.dropFirst() }
            if rest.drop(while: { $0 == " " || $0 == "\t" }).first == "#" {
                return Problem(line: index + 1, message: "not valid TOML: a table header cannot start with a comment")
            }
        }
        return nil
    }
}
