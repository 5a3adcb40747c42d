/// Large type for the device flow's user code: 3×5 pixel glyphs drawn with half blocks, three
/// rows of text tall, so the code can be read across a room or from a photo of the screen.
enum BlockFont {
    /// Text rows a drawing takes.
    static let height = 3

    /// Pixel rows of each glyph, `#` lit. Digits and capitals; anything else is drawn as itself.
    static let glyphs: [Character: [String]] = [
        "0": ["###", "#.#", "#.#", "#.#", "###"], "1": [".#.", "##.", ".#.", ".#.", "###"],
        "2": ["###", "..#", "###", "#..", "###"], "3": ["###", "..#", ".##", "..#", "###"],
        "4": ["#.#", "#.#", "###", "..#", "..#"], "5": ["###", "#..", "###", "..#", "###"],
        "6": ["###", "#..", "###", "#.#", "###"], "7": ["###", "..#", "..#", ".#.", ".#."],
        "8": ["###", "#.#", "###", "#.#", "###"], "9": ["###", "#.#", "###", "..#", "###"],
        "A": [".#.", "#.#", "###", "#.#", "#.#"], "B": ["##.", "#.#", "##.", "#.#", "##."],
        "C": [".##", "#..", "#..", "#..", ".##"], "D": ["##.", "#.#", "#.#", "#.#", "##."],
        "E": ["###", "#..", "##.", "#..", "###"], "F": ["###", "#..", "##.", "#..", "#.."],
        "G": [".##", "#..", "#.#", "#.#", ".##"], "H": ["#.#", "#.#", "###", "#.#", "#.#"],
        "I": ["###", ".#.", ".#.", ".#.", "###"], "J": ["..#", "..#", "..#", "#.#", ".#."],
        "K": ["#.#", "#.#", "##.", "#.#", "#.#"], "L": ["#..", "#..", "#..", "#..", "###"],
        "M": ["#.#", "###", "###", "#.#", "#.#"], "N": ["##.", "#.#", "#.#", "#.#", "#.#"],
        "O": [".#.", "#.#", "#.#", "#.#", ".#."], "P": ["##.", "#.#", "##.", "#..", "#.."],
        "Q": [".#.", "#.#", "#.#", "##.", ".##"], "R": ["##.", "#.#", "##.", "#.#", "#.#"],
        "S": [".##", "#..", ".#.", "..#", "##."], "T": ["###", ".#.", ".#.", ".#.", ".#."],
        "U": ["#.#", "#.#", "#.#", "#.#", "###"], "V": ["#.#", "#.#", "#.#", "#.#", ".#."],
        "W": ["#.#", "#.#", "###", "###", "#.#"], "X": ["#.#", "#.#", ".#.", "#.#", "#.#"],
        "Y": ["#.#", "#.#", ".#.", ".#.", ".#."], "Z": ["###", "..#", ".#.", "#..", "###"],
        "-": ["...", "...", "###", "...", "..."],
    ]

    /// Cells one character takes, with the gap after it.
    static let advance = 4

    /// The three rows of `text` in large type (lower case drawn as capitals).
    static func lines(_ text: String) -> [String] {
        var rows = Array(repeating: "", count: height)
        for character in text {
            let upper = Character(character.uppercased())
            guard let glyph = glyphs[upper] else {
                // Not in the font: the character itself in the middle row, spaced like a glyph.
                let plain = DisplayWidth.of(character) == 1 ? String(character) : "?"
                for row in 0..<height { rows[row] += (row == 1 ? " \(plain) " : "   ") + " " }
                continue
            }
            let pixels = glyph + ["..."]
            for row in 0..<height {
                let top = Array(pixels[row * 2])
                let bottom = Array(pixels[row * 2 + 1])
                rows[row] +=
                    String(
                        zip(top, bottom).map { pair -> Character in
                            switch pair {
                            case ("#", "#"): return "█"
                            case ("#", _): return "▀"
                            case (_, "#"): return "▄"
                            default: return " "
                            }
                        }) + " "
            }
        }
        return rows.map { String($0.dropLast()) }
    }
}
