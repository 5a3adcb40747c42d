/// A line the agent says about something that can happen many times a second at an attacker's
/// choosing (connections refused because the agent is full, or from another user): said the
/// first time, then at most once per `interval`, each time with how many went unsaid since, so a
/// flood of connections cannot flood the agent's terminal or log with it.
struct RepeatedNotice: Sendable {
    let interval: Duration
    private var lastSaid: ContinuousClock.Instant?
    private var unsaid = 0

    init(interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// The line to say for one more occurrence of `text` at `now`, or `nil` to stay quiet.
    mutating func occurred(_ text: String, at now: ContinuousClock.Instant) -> String? {
        if let lastSaid, now - lastSaid < interval {
            unsaid += 1
            return nil
        }
        defer {
            lastSaid = now
            unsaid = 0
        }
        guard unsaid > 0 else { return text }
        return text + " (and \(unsaid) more like it in the \(interval.components.seconds) s before, not said one by one)"
    }
}
