public import Foundation

/// The time of day, behind a seam so expiry, refresh margins and ID token times can be tested
/// at any instant.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The machine's clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}
