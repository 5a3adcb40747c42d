import Foundation

/// Reads numbers and strings out of `JSONSerialization` objects without mistaking booleans for
/// numbers: on Linux a JSON `0` or `1` is an `NSNumber` that also answers `is Bool`, so the
/// distinction must come from the number's type encoding (`c` for a boolean).
enum JSONScalar {
    static func isBoolean(_ value: Any?) -> Bool {
        guard let number = value as? NSNumber else { return value is Bool }
        return String(cString: number.objCType) == "c"
    }

    /// A JSON number (not a boolean) as a Double.
    static func number(_ value: Any?) -> Double? {
        guard !isBoolean(value), let number = value as? NSNumber else { return nil }
        return number.doubleValue
    }

    /// A JSON number that is a whole number in `Int` range.
    static func integer(_ value: Any?) -> Int? {
        guard let double = number(value), double.rounded() == double, abs(double) < 1e15 else { return nil }
        return Int(double)
    }

    /// A JSON string, or a number written as text (GitHub's numeric account `id`).
    static func text(_ value: Any?) -> String? {
        if let string = value as? String { return string }
        guard let double = number(value) else { return nil }
        return integer(value).map(String.init) ?? String(double)
    }
}
