public import Foundation

/// The time of day, behind a seam so expiry, refresh margins, ID token times and polling can be
/// tested at any instant.
public protocol WallClock: Sendable {
    func now() -> Date
    /// Waits `duration` (polling intervals): a test clock moves its time instead of waiting.
    func sleep(for duration: Duration) async throws
}

/// The machine's clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
