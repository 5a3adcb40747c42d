/// A lifetime in seconds as a server or plugin sends one: `expires_in` (RFC 6749 §5.1, RFC 8628
/// §3.2), Firebase's `expiresIn`, a plugin's `expires_in`. The one reading of all of them: a
/// whole non-negative JSON number or a string of ASCII digits (Identity Toolkit sends `"3600"`),
/// at most `longest`. A fraction, a negative number, a boolean or other text is no lifetime;
/// each caller decides whether that refuses the answer or counts as absent.
package struct WireLifetime: Decodable, Sendable, Equatable {
    package var seconds: Int

    /// Ten years: a server promising more is mistaken, and an unbounded lifetime would only
    /// break date arithmetic later.
    static let longest = 10 * 365 * 86_400

    init?(_ value: JSONValue) {
        switch value {
        case .string(let text):
            self.init(text: text)
        case .number(let number):
            guard number >= 0, number.rounded() == number else { return nil }
            self.init(seconds: number >= Double(Self.longest) ? Self.longest : Int(number))
        default:
            return nil
        }
    }

    package init?(text: String) {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        self.init(seconds: min(Int(text) ?? Self.longest, Self.longest))
    }

    private init(seconds: Int) { self.seconds = seconds }

    package init(from decoder: any Decoder) throws {
        guard let lifetime = Self(try JSONValue(from: decoder)) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not a non-negative whole number of seconds"))
        }
        self = lifetime
    }
}
