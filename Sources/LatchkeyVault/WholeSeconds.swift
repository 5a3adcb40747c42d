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
    /// The expiry a stored token may have: from `time` (a token that expired before it was
    /// stored is stored as expired now) to ten years after it. Every lifetime from every source
    /// passes here (`expires_in`, an ID token's `exp`, the Identity Toolkit's `expiresIn`, a
    /// plugin's answer): a negative one is a server's mistake and showed as a year before the
    /// common era; a huge one is a mistake or an attack and would only break arithmetic later.
    public static func boundedExpiry(_ expiry: Date?, at time: Date) -> Date? {
        expiry.map { min(max($0, time), time.addingTimeInterval(10 * 365 * 86_400)) }
    }
}
