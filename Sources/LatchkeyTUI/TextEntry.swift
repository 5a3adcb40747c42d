public import LatchkeyVault

/// One line of typed text in a form: the redirect URL, an email, a password, a code.
///
/// Kept as a `Secret`, so a state printed by a failing test or a log shows no typed value; the
/// renderer decides what of it is drawn (dots for a password, the tail for a long URL).
public struct TextEntry: Sendable, Equatable {
    public private(set) var value = Secret("")
    /// Characters allowed (nil: any printable one).
    let allowed: (@Sendable (Character) -> Bool)?
    /// Longest text accepted (nil: no limit, as for a pasted URL).
    let maximumLength: Int?

    public init(maximumLength: Int? = nil, allowed: (@Sendable (Character) -> Bool)? = nil) {
        self.maximumLength = maximumLength
        self.allowed = allowed
    }

    public var text: String { value.exposedValue }
    public var count: Int { value.exposedValue.count }
    public var isEmpty: Bool { value.exposedValue.isEmpty }

    /// Applies an editing key; false when the key is not an edit (Enter, Esc, arrows).
    mutating func edit(_ key: Key) -> Bool {
        switch key {
        case .character(let character) where !character.isNewline:
            guard character.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return true }
            if let allowed, !allowed(character) { return true }
            if let maximumLength, count >= maximumLength { return true }
            value = Secret(text + String(character))
        case .backspace:
            value = Secret(String(text.dropLast()))
        default:
            return false
        }
        return true
    }

    mutating func clear() { value = Secret("") }

    public static func == (lhs: TextEntry, rhs: TextEntry) -> Bool {
        lhs.value == rhs.value && lhs.maximumLength == rhs.maximumLength
    }

    /// What fits in `width` cells with the cursor: the end of the text, "…" where the rest was cut.
    static func visibleTail(_ text: String, width: Int, cursor: Bool = true) -> String {
        let end = cursor ? "▏" : ""
        guard width > 1 else { return "" }
        let room = width - end.count
        guard DisplayWidth.of(text) > room else { return text + end }
        var tail = ""
        var used = 1
        for character in text.reversed() {
            let cells = DisplayWidth.of(character)
            if used + cells > room { break }
            tail.insert(character, at: tail.startIndex)
            used += cells
        }
        return "…" + tail + end
    }
}
