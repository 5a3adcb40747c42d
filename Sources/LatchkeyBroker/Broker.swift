public import LatchkeyBrokerWire

/// The one door every other door asks for a credential: `token`, `exec`, `proof`, the git,
/// kubectl and registry helpers, `mcp headers` and `mcp proxy`, the clouds' helpers, `status`,
/// the screen's approvals. Two implementations answer alike: `LocalBroker` (this machine's
/// keystore and the one release decision) and `AgentBroker` (the agent, which serves a
/// `LocalBroker` behind its socket). A caller never picks one (`Composition.broker`), never
/// re-checks an answer and never restates a rule kept here: which token a refusal refreshes, how
/// much scope a server may make a person sign in for, what a forwarded host may receive.
public protocol Broker: Sendable {
    /// An account's access or ID token (or both), or an access token narrowed to a resource and
    /// scopes; with `refused`, refreshed when that is the token the account holds
    /// (`ForcedRefresh`).
    func token(_ request: TokenRequest) async throws -> TokenRelease

    /// A DPoP proof for one request with the account's current (or a kept narrowed) access token.
    func proof(_ request: ProofRequest) async throws -> ProofRelease

    /// AWS credentials for a role, from STS with the account's web identity token.
    func awsCredential(_ request: AWSCredentialRequest) async throws -> AWSRelease

    /// git's credential for a host in a provider's `git_hosts`; no credential for another host.
    func gitCredential(_ request: GitRequest) async throws -> GitRelease

    /// A registry's user name and token for a host in a provider's `registry_hosts`.
    func registryCredential(_ request: RegistryRequest) async throws -> RegistryRelease

    /// The accounts the asker may use, as `status` shows them.
    func status(_ request: StatusRequest) async throws -> StatusReply

    /// A person's answer to a release waiting for approval.
    func answer(_ request: ApprovalRequest) async throws

    /// Signs the account in again for more scope a server asked for (`insufficient_scope`, RFC
    /// 6750 §3.1), when a person accepts it (`ScopeStepUp`).
    func moreScope(_ request: ScopeRequest) async throws
}

/// More scope a server asked for, and who asked, in words the person can judge.
public struct ScopeRequest: Sendable, Equatable {
    public var selector: String
    public var scopes: [String]
    /// "the MCP server https://mcp.example.com/": shown when the person is asked.
    public var askedBy: String

    public init(selector: String, scopes: [String], askedBy: String) {
        self.selector = selector
        self.scopes = scopes
        self.askedBy = askedBy
    }
}
