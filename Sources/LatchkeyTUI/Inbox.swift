import Synchronization

/// Where async work leaves its results for the terminal loop, which drains it on every tick.
public final class Inbox: Sendable {
    private let events = Mutex<[Event]>([])

    public init() {}

    public func post(_ event: Event) {
        events.withLock { $0.append(event) }
    }

    /// Everything posted since the last drain, oldest first.
    public func drain() -> [Event] {
        events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}
