/// A person who can agree to a token of a `confirm = true` account going to another program, when
/// a command on this machine hands it on without the agent (which asks in its own ways). The
/// command line's terminal interaction is one.
public protocol ReleaseApproval: Sendable {
    /// Whether the person agrees that `requester` gets a token of `account`; `nil` when nobody
    /// answered within `seconds`.
    func approveRelease(of account: String, to requester: String, within seconds: Int) async -> Bool?
}
