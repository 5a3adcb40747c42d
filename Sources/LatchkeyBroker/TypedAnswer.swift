/// A line typed on the agent's own terminal in answer to releases waiting for a person: `y N` or
/// `n N` (also `yes`, `no`) answers request N; `y` or `n` alone answers the one request that
/// waits. With several waiting, a bare answer is refused rather than given to the oldest: a
/// request that arrived a moment before the key was pressed (from a forwarded host, say) would
/// otherwise get the approval the person meant for another.
public enum TypedAnswer: Equatable, Sendable {
    case answer(id: Int, approve: Bool)
    /// Not `y`, `yes`, `n` or `no` first.
    case notAnAnswer
    /// `y` or `n` alone, and nothing waits.
    case nothingWaits
    /// `y` or `n` alone, and these requests wait.
    case whichOne([Int])

    /// What `line` answers, when `waiting` (the numbers of the requests waiting, oldest first) wait.
    public init(_ line: String, waiting: [Int]) {
        let words = line.split(separator: " ")
        guard let word = words.first?.lowercased(), ["y", "yes", "n", "no"].contains(word) else {
            self = .notAnAnswer
            return
        }
        let approve = word.hasPrefix("y")
        if words.count > 1 {
            guard let id = Int(words[1]) else {
                self = .notAnAnswer
                return
            }
            self = .answer(id: id, approve: approve)
            return
        }
        switch waiting.count {
        case 0: self = .nothingWaits
        case 1: self = .answer(id: waiting[0], approve: approve)
        default: self = .whichOne(waiting)
        }
    }
}
