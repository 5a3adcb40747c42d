import LatchkeyEssentials
import LatchkeyVault

/// A reader for the small XML documents AWS STS answers with, in Swift alone.
///
/// STS's answers are a few elements of text, so only that much XML is read: elements,
/// attributes (read and dropped), text, comments, the XML declaration, and the five predefined
/// entities and character references. A document type declaration, an entity of any other
/// name, CDATA and processing instructions are refused outright, so nothing an answer says can
/// make the reader expand text or fetch anything (the "billion laughs" and external entities of
/// general-purpose parsers); size, depth and element count are capped before they cost memory
/// or stack. Anything else that is not well-formed is refused too, with where it stopped.
struct StrictXML {
    /// One element: its local name (the part after any `prefix:`), its children and its text,
    /// every text piece between them joined.
    struct Element: Equatable {
        var name: String
        var children: [Element] = []
        var text = ""

        /// The only child named `name`; `nil` when there is none, a problem when there are several.
        func child(_ name: String) throws(Problem) -> Element? {
            let matches = children.filter { $0.name == name }
            guard matches.count <= 1 else { throw .malformed("<\(self.name)> holds \(matches.count) <\(name)> elements") }
            return matches.first
        }
    }

    enum Problem: Error, Equatable {
        case tooLarge(limit: Int)
        case tooDeep(limit: Int)
        case tooManyElements(limit: Int)
        /// `<!DOCTYPE`, `<![CDATA[`, `<?pi` or an entity other than XML's five predefined ones.
        case refused(String)
        case malformed(String)

        var description: String {
            switch self {
            case .tooLarge(let limit): return "larger than \(limit / 1024) KiB"
            case .tooDeep(let limit): return "nested deeper than \(limit) elements"
            case .tooManyElements(let limit): return "more than \(limit) elements"
            case .refused(let what): return "\(what) (refused: an STS answer has none)"
            case .malformed(let what): return "not well-formed XML: \(what)"
            }
        }
    }

    /// Far above an STS answer (about 2–4 KiB with a long session token).
    static let sizeLimit = 64 * 1024
    static let depthLimit = 8
    static let elementLimit = 256

    private let bytes: [UInt8]
    private var position = 0
    private var elements = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The document's root element.
    static func parse(_ bytes: [UInt8]) throws(Problem) -> Element {
        guard bytes.count <= sizeLimit else { throw .tooLarge(limit: sizeLimit) }
        var reader = StrictXML(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.position = 3 }
        if reader.looking(at: "<?xml") {
            guard let end = reader.find("?>") else { throw .malformed("an XML declaration without its end") }
            reader.position = end + 2
        }
        try reader.skipMisc()
        guard reader.looking(at: "<") else { throw .malformed("no root element") }
        let root = try reader.element(depth: 1)
        try reader.skipMisc()
        guard reader.position == bytes.count else { throw .malformed("text after the root element at byte \(reader.position)") }
        return root
    }

    // MARK: - Markup

    private mutating func element(depth: Int) throws(Problem) -> Element {
        guard depth <= Self.depthLimit else { throw .tooDeep(limit: Self.depthLimit) }
        elements += 1
        guard elements <= Self.elementLimit else { throw .tooManyElements(limit: Self.elementLimit) }
        position += 1  // "<"
        let qualified = try name()
        var element = Element(name: Self.localName(qualified))
        while true {
            let hadSpace = skipSpace()
            if looking(at: "/>") {
                position += 2
                return element
            }
            if looking(at: ">") {
                position += 1
                break
            }
            guard hadSpace else { throw .malformed("<\(qualified)> is not closed at byte \(position)") }
            try attribute()
        }
        var text: [UInt8] = []
        while true {
            guard position < bytes.count else { throw .malformed("<\(qualified)> is never closed") }
            if looking(at: "</") {
                position += 2
                guard try name() == qualified else { throw .malformed("<\(qualified)> is closed by another element at byte \(position)") }
                skipSpace()
                guard looking(at: ">") else { throw .malformed("</\(qualified) is not closed at byte \(position)") }
                position += 1
                element.text = try Self.string(text)
                return element
            } else if looking(at: "<!--") {
                try comment()
            } else if looking(at: "<!") {
                throw .refused("a document type declaration or CDATA section")
            } else if looking(at: "<?") {
                throw .refused("a processing instruction")
            } else if looking(at: "<") {
                element.children.append(try self.element(depth: depth + 1))
            } else if looking(at: "&") {
                text += try reference()
            } else {
                text.append(bytes[position])
                position += 1
            }
        }
    }

    /// `name = "value"` or `'value'`; read to check the markup, then dropped.
    private mutating func attribute() throws(Problem) {
        _ = try name()
        skipSpace()
        guard looking(at: "=") else { throw .malformed("an attribute without a value at byte \(position)") }
        position += 1
        skipSpace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
            throw .malformed("an attribute value without quotes at byte \(position)")
        }
        let quote = bytes[position]
        position += 1
        while position < bytes.count, bytes[position] != quote {
            if bytes[position] == UInt8(ascii: "<") { throw .malformed("'<' in an attribute value at byte \(position)") }
            if bytes[position] == UInt8(ascii: "&") { _ = try reference() } else { position += 1 }
        }
        guard position < bytes.count else { throw .malformed("an attribute value is never closed") }
        position += 1
    }

    /// Whitespace and comments outside the root element; anything else of markup is refused.
    private mutating func skipMisc() throws(Problem) {
        while true {
            skipSpace()
            if looking(at: "<!--") {
                try comment()
            } else if looking(at: "<!") {
                throw .refused("a document type declaration")
            } else if looking(at: "<?") {
                throw .refused("a processing instruction")
            } else {
                return
            }
        }
    }

    private mutating func comment() throws(Problem) {
        guard let end = find("-->", from: position + 4) else { throw .malformed("a comment is never closed") }
        position = end + 3
    }

    /// An XML name: a letter, `_` or `:`, then those, digits, `-` and `.` (ASCII only: STS's names are).
    private mutating func name() throws(Problem) -> String {
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            let isStart = Self.isLetter(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
            let isPart = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            guard isStart || (position > start && isPart) else { break }
            position += 1
        }
        guard position > start else { throw .malformed("a name expected at byte \(position)") }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&#N;` or `&#xH;`, as UTF-8.
    private mutating func reference() throws(Problem) -> [UInt8] {
        guard let end = find(";", from: position), end - position <= 12 else {
            throw .malformed("an '&' without its ';' at byte \(position)")
        }
        let body = String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
        position = end + 1
        let predefined = ["lt": "<", "gt": ">", "amp": "&", "quot": "\"", "apos": "'"]
        if let character = predefined[body] { return Array(character.utf8) }
        guard body.hasPrefix("#") else { throw .refused("the entity &\(TerminalText.sanitized(body, maxLength: 12));") }
        let digits = body.dropFirst()
        let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
        guard let value, let scalar = Unicode.Scalar(value), Self.isXMLCharacter(scalar) else {
            throw .malformed("&\(TerminalText.sanitized(body, maxLength: 12)); is not a character XML allows")
        }
        return Array(String(scalar).utf8)
    }

    // MARK: - Bytes

    private func looking(at text: String) -> Bool {
        let expected = Array(text.utf8)
        return bytes.count - position >= expected.count && bytes[position..<(position + expected.count)].elementsEqual(expected)
    }

    private func find(_ text: String, from start: Int? = nil) -> Int? {
        let expected = Array(text.utf8)
        var index = start ?? position
        while index + expected.count <= bytes.count {
            if bytes[index..<(index + expected.count)].elementsEqual(expected) { return index }
            index += 1
        }
        return nil
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = position
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        return position > start
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// XML 1.0's `Char`: no C0 control but tab and line breaks, no surrogates, no U+FFFE/U+FFFF.
    private static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    private static func localName(_ qualified: String) -> String {
        qualified.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? qualified
    }

    /// Text as UTF-8 that must be valid and hold only characters XML allows.
    private static func string(_ bytes: [UInt8]) throws(Problem) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformed("text that is not UTF-8") }
        guard text.unicodeScalars.allSatisfy(isXMLCharacter) else { throw .malformed("a control character in text") }
        return text
    }
}
