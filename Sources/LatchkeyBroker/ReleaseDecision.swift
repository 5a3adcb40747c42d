public import LatchkeyKeystore

/// How one release of an account's token goes, event by event, at every door that hands tokens
/// out: the agent's local socket, its forwarded socket, and a command on this machine handing a
/// token on without the agent.
///
/// It only decides: each event returns what to do next (`Action`), and the door does it (asks a
/// person, writes the release log, fetches the token, fires the hook, throws). So the rule is
/// stated once, the agent and the commands cannot drift apart, and every decision is tested
/// without sockets, terminals or a vault (`ReleaseDecisionTests`).
///
/// Every door asks before it fetches, so a refused release costs no refresh. The doors differ in
/// what is written down: the agent logs and tells the `on_release` hook of every release, a
/// command only of the ones a person approved (a script's every `latchkey token` would drown the
/// log).
public struct ReleaseDecision: Sendable, Equatable {
    public enum Door: Sendable, Equatable {
        /// `latchkey agent`'s local socket, or its forwarded one (`ssh -R`).
        case agent(forwarded: Bool)
        /// `token`, `exec`, the credential helpers… handing a token on themselves.
        case command
    }

    /// What a person answered, or why nobody did.
    public enum Answer: Sendable, Equatable {
        case approved
        case denied
        case timedOut
        /// The client went away before anyone answered.
        case abandoned
        /// No terminal, no agent: nobody could have been asked.
        case nobodyToAsk
    }

    public enum Action: Sendable, Equatable {
        /// Ask a person, waiting at most `seconds`, then tell `answered`.
        case ask(seconds: Int)
        /// Fetch the token (refreshed or narrowed as asked), then tell `tokenReady` or `tokenFailed`.
        case fetchToken
        /// Append an entry to the release log (`latchkey agent log`).
        case log(ReleaseLog.Entry.Outcome, reason: String? = nil)
        /// Tell config.toml's `on_release` hook.
        case fireReleaseHook
        /// Give the token to the program that asked. The last action.
        case handOver
        /// Give nothing, for this reason. The last action.
        case refuse(ReleaseRefusal)
    }

    /// `PROVIDER:LABEL`, as the log and the prompts name it.
    public let account: String
    public let provider: String
    public let door: Door
    /// The account's policy (`LatchkeyConfiguration.sharing`): `forward = true`, `confirm = true`.
    public let forward: Bool
    public let confirm: Bool
    /// How long a person has to answer (`[agent] confirm_timeout`).
    public let confirmSeconds: Int
    /// A person approved this release (`answered(.approved)`).
    public private(set) var approved = false

    public init(account: String, provider: String, door: Door, forward: Bool, confirm: Bool, confirmSeconds: Int) {
        self.account = account
        self.provider = provider
        self.door = door
        self.forward = forward
        self.confirm = confirm
        self.confirmSeconds = confirmSeconds
    }

    private var forwarded: Bool { door == .agent(forwarded: true) }

    /// Whether an account with this policy may be chosen at `door` at all: a forwarded host
    /// chooses among shared accounts only, and is shown only those.
    public static func isVisible(forward: Bool, at door: Door) -> Bool {
        door != .agent(forwarded: true) || forward
    }

    /// A forwarded selector that matched no shared account: refused in the words an unknown
    /// account gets, so the host learns nothing of what it is not given.
    public static let noSharedAccount: [Action] = [
        .log(.refused, reason: "no account shared with forwarded connections"), .refuse(.notShared),
    ]

    /// What a request names beyond the account that a forwarded host may name only when the
    /// provider file lists it: each is kept in the vault, or says what the account's token opens
    /// or where it is sent, which the machine holding the account decides, not the host.
    public enum Named: Sendable, Hashable, CaseIterable {
        /// A resource the access token is narrowed to (`resources`, `git_resource`).
        case resource
        /// An AWS role assumed with the account's ID token (`aws_role_arn`, `aws_roles`).
        case awsRole
        /// The STS endpoint the ID token is sent to (`aws_sts_endpoint`).
        case stsEndpoint
        /// The URL a DPoP proof is signed for (`mcp_url`): a proof lets the token be used there.
        case proofURL
        /// The account's identity token (its ID token, or the access token `aws_web_identity_token
        /// = "access_token"` names) when its provider file lists clouds that take it as the account
        /// (AWS roles or an STS endpoint, an OpenBao address, a Google audience), or when that file
        /// cannot be read (it might list them): a forwarded host gets only the credentials made from
        /// it through those lists, unless the file says `forward_id_token = true`.
        case identityToken

        /// Why the release log says it was refused.
        var refusalReason: String {
            switch self {
            case .resource: return "a resource the provider file does not list"
            case .awsRole: return "an AWS role the provider file does not list"
            case .stsEndpoint: return "an STS endpoint the provider file does not name"
            case .proofURL: return "a DPoP proof for a URL the provider file does not name"
            case .identityToken:
                return "an identity token the provider file keeps for its clouds, or whose provider file cannot be read"
                    + " (forward_id_token is not set)"
            }
        }
    }

    /// The account was chosen; `naming` is what the request names beyond it, each with whether
    /// the provider file lists it. A forwarded host is refused the first unlisted one (in
    /// `Named`'s order), before any person is asked; local clients may name anything.
    public func chosen(naming: [Named: Bool] = [:]) -> [Action] {
        if forwarded && !forward { return Self.noSharedAccount }
        if forwarded, let unlisted = Named.allCases.first(where: { naming[$0] == false }) {
            return [.log(.refused, reason: unlisted.refusalReason), .refuse(.notListed(unlisted, provider: provider))]
        }
        if confirm { return [.ask(seconds: confirmSeconds)] }
        return [.fetchToken]
    }

    /// A person's answer to `ask`, or why there was none.
    public mutating func answered(_ answer: Answer) -> [Action] {
        switch answer {
        case .approved:
            approved = true
            return [.fetchToken]
        case .denied:
            return [.log(.denied), .refuse(.denied(account: account))]
        case .timedOut:
            return [.log(.unapproved), .refuse(.notApproved(account: account, seconds: confirmSeconds))]
        case .abandoned:
            return [.log(.refused, reason: "the client went away"), .refuse(.abandoned(account: account))]
        case .nobodyToAsk:
            return [.log(.refused, reason: "nobody to ask"), .refuse(.nobodyToAsk(account: account))]
        }
    }

    /// The token was fetched: every release the agent makes is logged and heard by the hook, a
    /// command's only when a person approved it.
    public func tokenReady() -> [Action] {
        if door != .command { return [.log(.released), .fireReleaseHook, .handOver] }
        return approved ? [.log(.released), .handOver] : [.handOver]
    }

    /// The token could not be fetched (`reason` says why; the error itself goes to the client as
    /// it is): the agent logs the refusal.
    public func tokenFailed(reason: String) -> [Action] {
        door == .command ? [] : [.log(.refused, reason: reason)]
    }
}
