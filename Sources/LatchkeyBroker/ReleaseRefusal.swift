import LatchkeyEssentials
public import LatchkeyVault

/// Why a token was not released (`ReleaseDecision`): a person said no or nobody could, or a
/// forwarded host asked for what is not shared with it.
public enum ReleaseRefusal: LatchkeyError, Equatable {
    case denied(account: String)
    case notApproved(account: String, seconds: Int)
    /// No agent answered and there is no terminal to ask on (cron, CI, a service, a pipe).
    case nobodyToAsk(account: String)
    /// The client closed its connection before anyone answered.
    case abandoned(account: String)
    /// No account marked `forward = true` answers a forwarded request: the same words whether the
    /// account is not shared, does not exist or its provider is unknown, so a forwarded host
    /// learns nothing of what it is not given.
    case notShared
    /// A forwarded host named what the provider file does not list: a resource (`resources`,
    /// `git_resource`), an AWS role (`aws_role_arn`, `aws_roles`) or an STS endpoint
    /// (`aws_sts_endpoint`), a URL to sign a DPoP proof for (`mcp_url`), or an identity token the
    /// file keeps for its clouds (`forward_id_token`).
    case notListed(ReleaseDecision.Named, provider: String)

    public var category: FailureCategory {
        if case .abandoned = self { return .unavailable }
        return .keystore
    }

    public var description: String {
        switch self {
        case .denied(let account):
            return "the release of a token of \(TerminalText.sanitized(account, maxLength: 200)) was denied"
        case .notApproved(let account, let seconds):
            return "nobody approved the release of a token of \(TerminalText.sanitized(account, maxLength: 200)) within \(seconds) s"
        case .nobodyToAsk(let account):
            return
                "\(TerminalText.sanitized(account, maxLength: 200)) is marked confirm = true and there is nobody to ask here (no terminal, no agent): start `latchkey agent`, which asks in its terminal, the open screen or by `latchkey approve`, or run this at a terminal"
        case .abandoned(let account):
            return "the request for a token of \(TerminalText.sanitized(account, maxLength: 200)) went away before anyone answered"
        case .notShared:
            return
                "no account shared with forwarded connections answers this request; an account is shared when it is marked forward = true on the machine running the agent (see latchkey(1), AGENT)"
        case .notListed(.resource, let provider):
            return
                "a forwarded connection gets a token only for a resource \(TerminalText.sanitized(provider, maxLength: 80))'s provider file lists (resources, git_resource) on the machine running the agent; list it there, or ask without --resource"
        case .notListed(.awsRole, let provider):
            return
                "a forwarded connection gets AWS credentials only for a role \(TerminalText.sanitized(provider, maxLength: 80))'s provider file lists (aws_role_arn, aws_roles) on the machine running the agent; list it there"
        case .notListed(.stsEndpoint, let provider):
            return
                "a forwarded connection may not choose the STS endpoint: the agent asks the one \(TerminalText.sanitized(provider, maxLength: 80))'s provider file names (aws_sts_endpoint) on the machine running the agent, else its own AWS_ENDPOINT_URL_STS or region's; leave out --sts-endpoint, or set aws_sts_endpoint there"
        case .notListed(.proofURL, let provider):
            return
                "a forwarded connection gets DPoP proofs only for the MCP server \(TerminalText.sanitized(provider, maxLength: 80))'s provider file names (mcp_url) on the machine running the agent"
        case .notListed(.identityToken, let provider):
            return
                "a forwarded connection gets no identity token of \(TerminalText.sanitized(provider, maxLength: 80))'s accounts: its provider file on the machine running the agent lists clouds that take that token as the account (aws_role_arn, aws_roles, aws_sts_endpoint, openbao_address or gcp_audience) or cannot be read there, so a forwarded host gets only what the agent makes from it through those lists, such as `latchkey aws-credential`; forward_id_token = true in that file releases it all the same"
        }
    }
}
