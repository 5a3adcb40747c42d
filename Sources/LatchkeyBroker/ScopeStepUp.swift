import Synchronization

/// The rule for more scope a server asks for (`insufficient_scope`, RFC 6750 §3.1): an account is
/// signed in again for the union of its scopes and the ones asked, at most once per such set and
/// at most `limit` times in one session (an agent, a command's whole run), and only once a person
/// has been shown the scopes and accepted them: a server cannot make a person sign in again and
/// again, nor for a scope nobody saw. A scope nobody accepted is never asked for, and so never
/// granted or stored.
public final class ScopeStepUp: Sendable {
    /// Sign-ins for more scope one session may make.
    public static let limit = 3

    public enum Verdict: Equatable, Sendable {
        /// Sign in again asking for these scopes (the union), once a person accepts `added`.
        case signIn(union: [String], added: [String])
        /// The account has them all already: the server refuses for another reason.
        case alreadyGranted
        /// This very set was signed in for already in this session, and the server asks again.
        case triedAlready([String])
        /// The session has made `limit` such sign-ins.
        case limitReached
    }

    private struct State {
        var tried: Set<[String]> = []
    }

    private let state = Mutex(State())

    public init() {}

    /// What to do about `asked`, for `account` holding `granted` at a provider asking for
    /// `configured` at each sign-in. A verdict to sign in is counted against the session's limit
    /// at once, whether or not the person then accepts.
    public func verdict(for account: String, asked: [String], granted: [String], configured: [String]) -> Verdict {
        var union: [String] = []
        for scope in configured + granted + asked where !union.contains(scope) { union.append(scope) }
        let added = asked.filter { !granted.contains($0) && !configured.contains($0) }
        guard !added.isEmpty else { return .alreadyGranted }
        let key = [account] + union.sorted()
        return state.withLock { state in
            if state.tried.contains(key) { return .triedAlready(added) }
            guard state.tried.count < Self.limit else { return .limitReached }
            state.tried.insert(key)
            return .signIn(union: union, added: added)
        }
    }
}

/// A person who can accept, or decline, more scope for an account: the command line's terminal.
public protocol ScopeApproval: Sendable {
    /// Whether the person accepts signing `account` in again for `scopes`, which `askedBy` asked
    /// for; `false` when declined or nobody answered.
    func approveScopes(_ scopes: [String], for account: String, askedBy: String) async -> Bool
}
