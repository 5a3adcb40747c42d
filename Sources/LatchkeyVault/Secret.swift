/// A value that must never be printed: tokens, codes, verifiers, passphrases.
///
/// `description` and `debugDescription` are redacted so a secret that slips into string
/// interpolation, a log line or an error message shows as `<redacted>` instead of its value.
public struct Secret: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read it only where it is sent or stored.
    public let exposedValue: String

    public init(_ value: String) { self.exposedValue = value }

    public init(from decoder: any Decoder) throws {
        exposedValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(exposedValue)
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }

    /// Compares in time independent of where the values differ, so a remote party
    /// cannot learn a `state` byte by byte from response timing.
    public func constantTimeEquals(_ other: String) -> Bool {
        constantTimeEqual(Array(exposedValue.utf8), Array(other.utf8))
    }
}

/// Byte comparison whose running time depends only on the lengths.
package func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    var difference = UInt8(lhs.count == rhs.count ? 0 : 1)
    let count = max(lhs.count, rhs.count)
    for index in 0..<count {
        let left = index < lhs.count ? lhs[index] : 0
        let right = index < rhs.count ? rhs[index] : 0
        difference |= left ^ right
    }
    return difference == 0
}
