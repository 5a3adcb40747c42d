/// Any JSON value, for members whose names or types are only known at run time (userinfo's
/// configurable `account_id_field`) or that several types may carry (`expires_in`).
///
/// A JSON `true` stays a boolean: it is tried before numbers, so it is never read as the number 1
/// (`JSONValueTests` pins it).
package enum JSONValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// A JSON number (never a boolean).
    var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// A JSON number that is a whole number of magnitude below 10^15 (exact in a `Double`).
    package var wholeNumber: Int? {
        guard let number, number.rounded() == number, abs(number) < 1e15 else { return nil }
        return Int(number)
    }

    /// A JSON string, or a number written as text (GitHub's numeric account `id`): whole numbers
    /// without a fraction, others as Swift prints a `Double`.
    package var text: String? {
        if case .string(let value) = self { return value }
        guard let number else { return nil }
        return wholeNumber.map(String.init) ?? String(number)
    }
}
