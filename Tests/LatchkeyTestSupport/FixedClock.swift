public import Foundation
public import LatchkeyCore
import Synchronization

/// A clock that says what the test tells it, and moves only when told.
public final class FixedClock: WallClock {
    private let instant: Mutex<Date>

    public init(_ date: Date = Date(timeIntervalSince1970: 1_750_000_000)) { instant = Mutex(date) }

    public func now() -> Date { instant.withLock { $0 } }

    public func advance(by seconds: TimeInterval) { instant.withLock { $0 = $0.addingTimeInterval(seconds) } }

    /// Moves the time on by `duration` at once: a polling loop runs its whole course instantly.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let (seconds, attoseconds) = duration.components
        advance(by: TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
    }
}
