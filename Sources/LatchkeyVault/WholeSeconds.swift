public import FoundationEssentials

extension Int {
    /// `seconds` rounded down to whole seconds, clamped to ±`Int.max` (NaN is 0): a duration
    /// computed from a stored or server-given date must never trap in a conversion.
    public init(wholeSeconds seconds: TimeInterval) {
        guard !seconds.isNaN else {
            self = 0
            return
        }
        let rounded = seconds.rounded(.down)
        if rounded >= 9.2e18 {
            self = .max
        } else if rounded <= -9.2e18 {
            self = -.max
        } else {
            self = Int(rounded)
        }
    }
}

extension AccountRecord {
    /// The latest expiry a stored token may have: ten years from `time`. A server may promise any
    /// lifetime (`expires_in`, an ID token's `exp`); beyond this it is a mistake or an attack, and
    /// an unbounded date would only break arithmetic later.
    public static func boundedExpiry(_ expiry: Date?, at time: Date) -> Date? {
        expiry.map { min($0, time.addingTimeInterval(10 * 365 * 86_400)) }
    }
}
