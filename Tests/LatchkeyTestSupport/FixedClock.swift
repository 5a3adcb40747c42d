public import Foundation
public import LatchkeySupport
import Synchronization

/// A clock that says what the test tells it, and moves only when told.
public final class FixedClock: WallClock {
    private let instant: Mutex<Date>
    private let deadlinesWait: Bool

    /// With `deadlinesWait`, a sleep of a minute or more (a deadline, not a poll interval) lasts
    /// until it is cancelled: for a test whose person answers at once, where a deadline that
    /// passed at once would race the answer (`withDeadline` starts both together) and win it now
    /// and then on a loaded machine.
    public init(_ date: Date = Date(timeIntervalSince1970: 1_750_000_000), deadlinesWait: Bool = false) {
        instant = Mutex(date)
        self.deadlinesWait = deadlinesWait
    }

    public func now() -> Date { instant.withLock { $0 } }

    public func advance(by seconds: TimeInterval) { instant.withLock { $0 = $0.addingTimeInterval(seconds) } }

    /// Moves the time on by `duration` at once: a polling loop runs its whole course instantly.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        if deadlinesWait && duration >= .seconds(60) {
            while true { try await Task.sleep(for: .seconds(86_400)) }
        }
        let (seconds, attoseconds) = duration.components
        advance(by: TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
    }
}
