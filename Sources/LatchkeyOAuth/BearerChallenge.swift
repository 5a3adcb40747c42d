import Foundation

/// The `Bearer` challenge of a 401 answer (RFC 6750 §3) in the `WWW-Authenticate` syntax of
/// RFC 9110 §11.6.1, with the `resource_metadata` parameter of RFC 9728 §5.1: where a protected
/// resource says its metadata is and which scope it wants.
public struct BearerChallenge: Sendable, Equatable {
    /// The challenge's auth-params, names lowercased (RFC 9110 §11.2: case-insensitive).
    public var parameters: [String: String]

    /// `resource_metadata` (RFC 9728 §5.1): the URL of the resource's metadata.
    public var resourceMetadata: String? { parameters["resource_metadata"] }
    /// `scope` (RFC 6750 §3): the scopes the resource asks for, space-separated.
    public var scope: String? { parameters["scope"] }

    public init(parameters: [String: String]) { self.parameters = parameters }

    /// The `Bearer` challenge among `values` (every `WWW-Authenticate` field of one answer);
    /// `nil` when there is none or when a field that holds one does not follow the grammar
    /// (a parameter twice, an unterminated quoted string, a control character).
    public static func find(in values: [String]) -> BearerChallenge? {
        for value in values {
            guard let challenges = challenges(in: value) else { return nil }
            if let bearer = challenges.first(where: { $0.scheme.lowercased() == "bearer" }) {
                return BearerChallenge(parameters: bearer.parameters)
            }
        }
        return nil
    }

    /// Every challenge of one field value, or `nil` when it does not parse.
    static func challenges(in value: String) -> [(scheme: String, parameters: [String: String])]? {
        var reader = Reader(Array(value.utf8))
        var found: [(scheme: String, parameters: [String: String])] = []
        while true {
            reader.skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: ",") }
            if reader.atEnd { return found }
            guard let scheme = reader.token() else { return nil }
            var parameters: [String: String] = [:]
            reader.skipSpace()
            while !reader.atEnd {
                let start = reader.index
                guard let name = reader.token() else { return nil }
                reader.skipSpace()
                guard reader.take(UInt8(ascii: "=")) else {
                    // A token not followed by "=" begins the next challenge.
                    reader.index = start
                    break
                }
                reader.skipSpace()
                guard let parameterValue = reader.peek == UInt8(ascii: "\"") ? reader.quotedString() : reader.token() else {
                    return nil
                }
                guard parameters.updateValue(parameterValue, forKey: name.lowercased()) == nil else { return nil }
                reader.skipSpace()
                if reader.atEnd { break }
                guard reader.take(UInt8(ascii: ",")) else { return nil }
                reader.skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: ",") }
            }
            found.append((scheme, parameters))
        }
    }

    /// A cursor over a field value's bytes.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[index] }

        mutating func skip(while test: (UInt8) -> Bool) {
            while let byte = peek, test(byte) { index += 1 }
        }

        mutating func skipSpace() { skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// `token` (RFC 9110 §5.6.2), or `nil` when none starts here.
        mutating func token() -> String? {
            let start = index
            skip(while: Self.isTokenCharacter)
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// `quoted-string` (RFC 9110 §5.6.4) without its quotes and escapes; `nil` when it is not
        /// closed or holds a control character.
        mutating func quotedString() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var text: [UInt8] = []
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek, escaped >= 0x20 || escaped == 0x09, escaped != 0x7F else { return nil }
                    index += 1
                    text.append(escaped)
                case 0x09, 0x20...0x7E, 0x80...0xFF: text.append(byte)
                default: return nil
                }
            }
            return nil
        }

        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default: return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }
    }
}
