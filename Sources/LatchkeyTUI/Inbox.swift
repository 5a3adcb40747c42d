import Synchronization

/// Where async work leaves its results for the terminal loop, which drains it on every tick.
public final class Inbox: Sendable {
    private let events = Mutex<[Event]>([])
    /// Ends the loop's wait for a key, so a posted event is handled at once.
    private let waker: (@Sendable () -> Void)?

    public init(waker: (@Sendable () -> Void)? = nil) { self.waker = waker }

    public func post(_ event: Event) {
        events.withLock { $0.append(event) }
        waker?()
    }

    /// Everything posted since the last drain, oldest first.
    public func drain() -> [Event] {
        events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}
