import LatchkeyEssentials
public import LatchkeyVault

/// Why the broker answered a request with nothing, when the reason is the request itself or one
/// of the broker's own rules (a release refused by the policy is a `ReleaseRefusal`; an account's
/// own trouble keeps its error).
public enum BrokerError: LatchkeyError, Equatable {
    /// The request cannot be answered as asked; `reason` says which part.
    case malformedRequest(reason: String)
    /// A client's refused token made the broker refresh this account moments ago
    /// (`ForcedRefresh.interval`); not again yet.
    case refreshedRecently(account: String, seconds: Int)
    /// A server asked for scopes the person declined, or that nobody could be asked about.
    case scopeNotAccepted(account: String, scopes: [String], askedBy: String, command: String)
    /// A server asked again for scopes a sign-in in this session already asked for.
    case scopeAskedAgain(account: String, scopes: [String], askedBy: String, command: String)
    /// A server asked for more scope more often than one session allows (`ScopeStepUp.limit`).
    case scopeLimitReached(account: String, askedBy: String)
    /// More scope through the agent: a sign-in needs the person where the agent runs.
    case scopeThroughAgent(account: String, scopes: [String], command: String)
    /// `approve` or `deny` with no agent running to hold the release.
    case noAgentToApprove(id: Int)

    public var category: FailureCategory {
        switch self {
        case .malformedRequest: return .usage
        case .refreshedRecently: return .unavailable
        case .scopeNotAccepted, .scopeAskedAgain, .scopeLimitReached, .scopeThroughAgent: return .rejected
        case .noAgentToApprove: return .notFound
        }
    }

    public var description: String {
        func words(_ scopes: [String]) -> String { scopes.map { TerminalText.sanitized($0, maxLength: 80) }.joined(separator: " ") }
        func name(_ text: String) -> String { TerminalText.sanitized(text, maxLength: 200) }
        switch self {
        case .malformedRequest(let reason):
            return "not a request the broker answers: \(reason)"
        case .refreshedRecently(let account, let seconds):
            return
                "\(name(account)) was refreshed moments ago for a token a server refused; it is refreshed again for that reason in \(seconds) s (a server refusing fresh tokens needs a look)"
        case .scopeNotAccepted(let account, let scopes, let askedBy, let command):
            return
                "\(name(askedBy)) asks \(name(account)) for more scope (\(words(scopes))), which nobody accepted here; to grant it, run `\(command)` at a terminal"
        case .scopeAskedAgain(let account, let scopes, let askedBy, let command):
            return
                "\(name(askedBy)) asks \(name(account)) again for \(words(scopes)), which this session asked about already:"
                + " either it was declined, or a sign-in asked for it and the provider did not grant it; no new sign-in for it now"
                + " (`\(TerminalText.sanitized(command, maxLength: 300))` asks for it, at a terminal)"
        case .scopeLimitReached(let account, let askedBy):
            return
                "\(name(askedBy)) asked \(name(account)) for more scope \(ScopeStepUp.limit) times in this session; no more sign-ins for it now"
        case .scopeThroughAgent(let account, let scopes, let command):
            return
                "\(name(account)) needs more scope (\(words(scopes))), and its tokens come from the agent, which never starts a sign-in for a client; run `\(command)` where the agent runs"
        case .noAgentToApprove(let id):
            return "no agent is running to hold request \(id); approvals are for releases waiting in `latchkey agent`"
        }
    }
}
