import Foundation
public import LatchkeyAccounts
public import LatchkeyBrokerWire
import LatchkeyClouds
import LatchkeyCredentialHelpers
import LatchkeyEssentials
public import LatchkeyKeystore
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault

/// The broker over this machine's keystore: every request goes through the one release decision
/// (`ReleaseDecision`) and the broker's rules, whichever door it came in by. A command uses one
/// directly (`Door.command`); the agent serves one per connection behind its sockets.
public struct LocalBroker: Broker {
    /// Where a request came in, and what can be done there that cannot elsewhere.
    public struct Door: Sendable {
        public var kind: ReleaseDecision.Door
        public var requester: Requester
        /// Asks a person whether `account`'s token may go to `requester`, waiting at most
        /// `seconds` (the agent's confirmations; a command's terminal).
        public var ask: @Sendable (_ account: String, _ requester: Requester, _ seconds: Int) async -> ReleaseDecision.Answer
        /// A person who can sign in when only a sign-in can give a token; `nil` where nobody can
        /// (the agent, which never starts a sign-in for a client; a script without a terminal).
        public var person: (any SignInInteraction)?
        /// A person who can accept more scope a server asked for; `nil` where nobody can.
        public var scopes: (any ScopeApproval)?
        /// Answers a release waiting for a person (the agent's local door only).
        public var approvals: (@Sendable (_ id: Int, _ approve: Bool) -> Bool)?
        /// Told when only a sign-in can give an account a token again (the agent's hooks).
        public var signInNeeded: @Sendable (AccountRecord, any Error) -> Void

        public init(
            kind: ReleaseDecision.Door, requester: Requester,
            ask: @escaping @Sendable (String, Requester, Int) async -> ReleaseDecision.Answer,
            person: (any SignInInteraction)? = nil, scopes: (any ScopeApproval)? = nil,
            approvals: (@Sendable (Int, Bool) -> Bool)? = nil,
            signInNeeded: @escaping @Sendable (AccountRecord, any Error) -> Void = { _, _ in }
        ) {
            self.kind = kind
            self.requester = requester
            self.ask = ask
            self.person = person
            self.scopes = scopes
            self.approvals = approvals
            self.signInNeeded = signInNeeded
        }

        var isForwarded: Bool { kind == .agent(forwarded: true) }
    }

    /// What a session (an agent, a command's whole run) remembers across its requests.
    public struct Memory: Sendable {
        public let forcedRefresh = ForcedRefresh()
        public let scopes = ScopeStepUp()
        public init() {}
    }

    let settings: @Sendable () -> BrokerSettings
    /// The accounts as a request from `workingDirectory` sees them (config.toml's mappings).
    let accounts: @Sendable (_ settings: BrokerSettings, _ workingDirectory: String?) -> AccountService
    let door: Door
    /// Writes an entry to the release log (`latchkey agent log`), saying a failure to write it.
    let log: @Sendable (ReleaseLog.Entry) -> Void
    let memory: Memory
    let say: @Sendable (String) -> Void

    public init(
        settings: @escaping @Sendable () -> BrokerSettings,
        accounts: @escaping @Sendable (BrokerSettings, String?) -> AccountService, door: Door,
        log: @escaping @Sendable (ReleaseLog.Entry) -> Void, memory: Memory, say: @escaping @Sendable (String) -> Void
    ) {
        self.settings = settings
        self.accounts = accounts
        self.door = door
        self.log = log
        self.memory = memory
        self.say = say
    }

    // MARK: - Tokens

    public func token(_ request: TokenRequest) async throws -> TokenRelease {
        let narrowing = request.narrowing
        guard request.minimumLifetime >= 0 else { throw BrokerError.malformedRequest(reason: "min_ttl must not be negative") }
        if narrowing != nil && request.tokens != .access {
            throw BrokerError.malformedRequest(reason: "resource and scope ask for an access token")
        }
        if request.refused != nil && (narrowing != nil || request.tokens != .access) {
            throw BrokerError.malformedRequest(reason: "refused goes with the account's own access token")
        }
        if let resource = narrowing?.resource, let problem = ResourceIndicator.problem(resource) {
            throw NarrowingError.invalidResource(problem: problem)
        }
        if let maxAge = request.maxAge, maxAge < 0 { throw BrokerError.malformedRequest(reason: "max_age must not be negative") }
        let stepUp = StepUp(acrValues: request.acrValues ?? [], maxAge: request.maxAge)
        return try await release(
            AccountSelector(parsing: request.selector), workingDirectory: request.workingDirectory,
            minimumLifetime: request.minimumLifetime, stepUp: stepUp,
            naming: { provider in
                var naming: [ReleaseDecision.Named: Bool] = [:]
                if let resource = narrowing?.resource { naming[.resource] = provider?.listedResources.contains(resource) ?? false }
                // A provider file that cannot be read might list clouds, or name the access token as
                // the account's identity: then no token of its accounts leaves for a forwarded host.
                let identity = request.tokens != .access || (narrowing == nil && provider?.accessTokenIsIdentity ?? true)
                if identity { naming[.identityToken] = provider?.forwardsIdentityTokens ?? false }
                return naming
            },
            fetch: { record, service in try await tokenRelease(of: record, request, service) })
    }

    /// The tokens of `record` `request` asks for, refreshed as needed; with a narrowing, the
    /// access token for that resource and those scopes. An access token goes with the MCP server
    /// its provider file names, the one URL it is bound to.
    private func tokenRelease(of chosen: AccountRecord, _ request: TokenRequest, _ service: AccountService) async throws
        -> TokenRelease
    {
        var record = try await service.validRecord(of: chosen, minimumLifetime: TimeInterval(request.minimumLifetime))
        if let refused = request.refused { record = try await refreshing(record, refused: refused, service) }
        var release = TokenRelease(provider: record.provider, account: record.label, subject: record.subject)
        if request.tokens != .id {
            let (token, expiresAt, current) = try await service.accessToken(
                of: record, narrowing: request.narrowing, minimumLifetime: TimeInterval(request.minimumLifetime),
                signingInWith: door.person)
            record = current
            release.accessToken = token
            release.expiresAt = expiresAt.map { Int(wholeSeconds: $0.timeIntervalSince1970) }
            release.proofBound = record.isProofBound
            release.mcpURL = (try? service.catalog.provider(named: record.provider))?.protocolChoices?.mcpURL?.absoluteString
        } else {
            release.expiresAt = record.expiresAt.map { Int(wholeSeconds: $0.timeIntervalSince1970) }
        }
        if request.tokens != .access { release.idToken = try service.token(of: record, idToken: true) }
        return release
    }

    /// `record`, refreshed now if `refused` is the `ath` of the access token it holds: a server
    /// has refused that token, so handing it out again would only be refused again. A hash of any
    /// other token changes nothing (the client's token is an old one; the current one is the
    /// answer). Judged under the keystore's lock, so two requests naming one refused token (a
    /// proxy's POST and GET) make one refresh, the second getting its result; and at most once
    /// per `ForcedRefresh.interval` for the account (`ForcedRefresh`).
    private func refreshing(_ record: AccountRecord, refused: String, _ service: AccountService) async throws -> AccountRecord {
        guard DPoPKey.accessTokenHash(record.accessToken) == refused else { return record }
        let name = "\(record.provider):\(record.label)"
        let now = service.engine.now()
        return try await service.refresh(record) { current in
            guard DPoPKey.accessTokenHash(current.accessToken) == refused else { return false }
            if let wait = memory.forcedRefresh.wait(for: current.identity, now: now) {
                throw BrokerError.refreshedRecently(account: name, seconds: wait)
            }
            say("refreshing \(TerminalText.sanitized(name, maxLength: 200)): a server refused its token")
            return true
        }
    }

    // MARK: - Proofs

    public func proof(_ request: ProofRequest) async throws -> ProofRelease {
        let (method, url) = try request.checked()
        return try await release(
            AccountSelector(parsing: request.selector), workingDirectory: request.workingDirectory, minimumLifetime: 0,
            naming: { provider in [.proofURL: ProofRequest.isNamed(url, by: provider)] },
            fetch: { chosen, service in
                // Read again at signing: a proof never goes with a token the account no longer holds.
                let record = try await service.keystore.record(chosen.identity) ?? chosen
                let proof = try service.proof(for: record, tokenHash: request.tokenHash, method: method, url: url, nonce: request.nonce)
                return ProofRelease(provider: record.provider, account: record.label, proof: Secret(proof))
            })
    }

    // MARK: - Clouds

    public func awsCredential(_ request: AWSCredentialRequest) async throws -> AWSRelease {
        let options = request.options
        if let duration = options.duration, !AWSNames.durations.contains(duration) {
            throw BrokerError.malformedRequest(reason: "duration must be from 900 to 43200 seconds")
        }
        guard request.minimumLifetime >= 0 else { throw BrokerError.malformedRequest(reason: "min_ttl must not be negative") }
        // A forwarded host may not choose where the identity token goes: its environment is not
        // heeded, this machine's is.
        let environment =
            door.isForwarded
            ? AWSRoleOptions.environment { ProcessInfo.processInfo.environment[$0] }
            : request.environment.filter { AWSRoleOptions.environmentNames.contains($0.key) && !$0.value.isEmpty }
        let selector = AccountSelector(parsing: request.selector)
        if !door.isForwarded, let settings = settings().provider(selector.provider)?.aws {
            // A malformed role, session name or endpoint costs no sign-in.
            _ = try options.checked(settings: settings, provider: selector.provider, environment: environment)
        }
        return try await release(
            selector, workingDirectory: request.workingDirectory, minimumLifetime: request.minimumLifetime,
            naming: { provider in
                let settings = provider?.aws ?? AWSSettings()
                var naming: [ReleaseDecision.Named: Bool] = [:]
                if let role = options.roleARN { naming[.awsRole] = settings.listedRoles.contains(role) }
                if let endpoint = options.stsEndpoint {
                    let named = try? AWSRoleOptions.endpoint(endpoint)
                    naming[.stsEndpoint] = settings.stsEndpoint != nil && named == settings.stsEndpoint
                }
                return naming
            },
            fetch: { chosen, service in
                let record = try await service.validRecord(of: chosen, minimumLifetime: TimeInterval(request.minimumLifetime))
                let credential = try await service.awsCredential(of: record, asked: selector, options, environment: environment)
                return AWSRelease(
                    provider: record.provider, account: record.label, accessKeyID: credential.accessKeyID,
                    secretAccessKey: credential.secretAccessKey, sessionToken: credential.sessionToken,
                    expiration: Int(wholeSeconds: credential.expiresAt.timeIntervalSince1970))
            })
    }

    // MARK: - git and registries

    public func gitCredential(_ request: GitRequest) async throws -> GitRelease {
        let parsed = try GitCredentialRequest(parsing: request.attributes)
        guard let provider = try parsed.provider(in: settings().catalog.providers) else { return GitRelease(credential: nil) }
        let narrowing = Self.gitNarrowing(request.narrowing, for: provider)
        let token = try await self.token(
            TokenRequest(
                selector: AccountSelector(provider: provider.name).description, minimumLifetime: request.minimumLifetime,
                narrowing: narrowing, workingDirectory: request.workingDirectory))
        guard let password = token.accessToken else { return GitRelease(credential: nil) }
        return GitRelease(credential: Secret(GitCredential(username: provider.gitUsername, password: password).exposedAnswer))
    }

    /// What git's token is narrowed to: `--resource` over the provider's `git_resource`, and
    /// `--scope`; `nil` for the account's own token.
    static func gitNarrowing(_ asked: TokenNarrowing?, for provider: Provider) -> TokenNarrowing? {
        let resource = asked?.resource ?? provider.gitResource
        let scopes = asked?.scopes ?? []
        return resource == nil && scopes.isEmpty ? nil : TokenNarrowing(resource: resource, scopes: scopes)
    }

    public func registryCredential(_ request: RegistryRequest) async throws -> RegistryRelease {
        let server = try RegistryServerURL(parsing: request.server)
        guard let provider = try server.provider(in: settings().catalog.providers) else {
            return RegistryRelease(username: nil, token: nil)
        }
        let token = try await self.token(
            TokenRequest(
                selector: AccountSelector(provider: provider.name).description, minimumLifetime: request.minimumLifetime,
                workingDirectory: request.workingDirectory))
        return RegistryRelease(username: provider.registryUsername, token: token.accessToken)
    }

    // MARK: - Status and approvals

    public func status(_ request: StatusRequest) async throws -> StatusReply {
        let settings = settings()
        let service = accounts(settings, door.isForwarded ? nil : request.workingDirectory)
        let visible = try await service.keystore.records().filter { isVisible($0, settings) }
        let report = StatusReport(
            records: visible, keystore: service.keystore.backendName + (door.isForwarded ? " (forwarded)" : ""), now: service.engine.now(),
            here: service.here.map { ($0.accounts, $0.path) })
        // A forwarded host hears only of the providers of the accounts it may use: the others,
        // and that they are configured here, are none of its business.
        let providers = settings.catalog.providers.filter { provider in
            !door.isForwarded || visible.contains { $0.provider == provider.name }
        }
        let warnings =
            door.kind == .command ? service.here.map { Self.mappingWarnings($0, records: visible, catalog: settings.catalog) } : nil
        return StatusReply(report: try report.json(), lines: report.listing(providers: providers), warnings: warnings ?? [])
    }

    /// config.toml lines mapping a directory to a provider that is not configured, or to an
    /// account not signed in: said, with the line, and otherwise ignored.
    static func mappingWarnings(_ here: WorkingDirectory, records: [AccountRecord], catalog: ProviderCatalog) -> [String] {
        var warnings: [String] = []
        for mapping in here.accounts.mappings {
            let place = here.configFile + (mapping.line.map { ":\($0)" } ?? "")
            let table = "[directories.\"\(TerminalText.sanitized(mapping.written, maxLength: 200))\"]"
            if let problem = mapping.pathProblem { warnings.append("\(place): \(table) \(problem)") }
            for (provider, account) in mapping.accounts.sorted(by: { $0.key < $1.key }) {
                if !catalog.providers.contains(where: { $0.name == provider }) {
                    warnings.append("\(place): \(table) names \(provider), which is not a configured provider")
                } else if (try? AccountSelector(provider: provider, account: account).index(in: records)) == nil {
                    warnings.append("\(place): \(table) maps \(provider) to \(account), who is not signed in there")
                }
            }
        }
        return warnings
    }

    public func answer(_ request: ApprovalRequest) async throws {
        guard let approvals = door.approvals else { throw BrokerError.noAgentToApprove(id: request.id) }
        guard approvals(request.id, request.approve) else { throw AgentError.noSuchConfirmation(request.id) }
    }

    // MARK: - More scope

    public func moreScope(_ request: ScopeRequest) async throws {
        let settings = settings()
        let service = accounts(settings, nil)
        let selector = AccountSelector(parsing: request.selector)
        let records = try await service.keystore.records()
        let record = try (service.here?.selector(selector, among: records) ?? selector).select(from: records)
        var provider = try settings.catalog.provider(named: record.provider)
        let name = "\(record.provider):\(record.label)"
        let asked = request.scopes.filter(ScopeToken.isValid)
        func command(adding scopes: [String]) -> String {
            "latchkey login \(AccountSelector(provider: record.provider, account: record.subject)) "
                + scopes.map { "--scope \($0)" }.joined(separator: " ")
        }
        switch memory.scopes.verdict(for: name, asked: asked, granted: record.scopes, configured: provider.scopes) {
        case .alreadyGranted:
            return
        case .triedAlready(let scopes):
            throw BrokerError.scopeAskedAgain(account: name, scopes: scopes, askedBy: request.askedBy, command: command(adding: scopes))
        case .limitReached:
            throw BrokerError.scopeLimitReached(account: name, askedBy: request.askedBy)
        case .signIn(let union, let added):
            let command = command(adding: added)
            guard let approval = door.scopes, let person = door.person,
                await approval.approveScopes(added, for: name, askedBy: request.askedBy)
            else {
                throw BrokerError.scopeNotAccepted(account: name, scopes: added, askedBy: request.askedBy, command: command)
            }
            provider.askFor(scopes: union)
            _ = try await service.signIn(
                provider: provider, account: AccountSelector(provider: record.provider, account: record.subject), interaction: person)
        }
    }

    // MARK: - The release

    /// Whether the door may see `record` at all (`ReleaseDecision.isVisible`): a forwarded one
    /// only accounts marked `forward = true`, by their `[accounts]` table or provider file.
    private func isVisible(_ record: AccountRecord, _ settings: BrokerSettings) -> Bool {
        ReleaseDecision.isVisible(forward: settings.sharing(of: record).forward, at: door.kind)
    }

    /// What `fetch` makes of `selector`'s account for this door, if it may have anything
    /// (`ReleaseDecision`): a forwarded door only of an account marked `forward = true`, chosen
    /// among those alone, and only what `naming` says the account's provider file (`nil`: not
    /// configured here) lists; an account marked `confirm = true` only once a person agreed.
    /// Logged, and heard by the `on_release` hook, as the decision says for the door.
    private func release<Release: Sendable>(
        _ selector: AccountSelector, workingDirectory: String?, minimumLifetime: Int, stepUp: StepUp = StepUp(),
        naming: (_ provider: Provider?) -> [ReleaseDecision.Named: Bool],
        fetch: (AccountRecord, AccountService) async throws -> Release
    ) async throws -> Release {
        let settings = settings()
        let service = accounts(settings, door.isForwarded ? nil : workingDirectory)
        let requester = door.requester
        func logged(account: String, _ outcome: ReleaseLog.Entry.Outcome, _ reason: String? = nil) {
            log(
                ReleaseLog.Entry(
                    time: Date(), account: account, requester: requester.description, forwarded: door.isForwarded, outcome: outcome,
                    reason: reason))
        }
        let record: AccountRecord
        switch door.kind {
        case .agent(forwarded: true):
            // Among the shared accounts only: a selector that names another, or nothing, gets the
            // words one that names no account at all gets, and an error listing candidates lists
            // only shared ones.
            do {
                record = try selector.select(from: try await service.keystore.records().filter { isVisible($0, settings) })
            } catch AccountSelectionError.notSignedIn {
                logged(account: selector.description, .refused, "no account shared with forwarded connections")
                throw ReleaseRefusal.notShared
            }
        case .agent(forwarded: false):
            let all = try await service.keystore.records()
            record = try (service.here?.selector(selector, among: all) ?? selector).select(from: all)
        case .command:
            // A person at the command's terminal may sign in for it, or more strongly.
            record = try await service.usableRecord(
                for: selector, minimumLifetime: TimeInterval(minimumLifetime), signingInWith: door.person, stepUp: stepUp)
        }
        if let problem = stepUp.problem(with: record, at: service.engine.now()) { throw problem }
        let sharing = settings.sharing(of: record)
        var decision = ReleaseDecision(
            account: "\(record.provider):\(record.label)", provider: record.provider, door: door.kind, forward: sharing.forward,
            confirm: sharing.confirm, confirmSeconds: settings.configuration.agent.confirmTimeout)
        var released: Release?
        var actions = decision.chosen(naming: naming(settings.provider(record.provider)))[...]
        while let action = actions.popFirst() {
            switch action {
            case .log(let outcome, let reason):
                logged(account: decision.account, outcome, reason)
            case .ask(let seconds):
                actions = decision.answered(await door.ask(decision.account, requester, seconds))[...]
            case .fetchToken:
                do {
                    released = try await fetch(record, service)
                    actions = decision.tokenReady()[...]
                } catch {
                    for case .log(let outcome, let reason) in decision.tokenFailed(
                        reason: (error as? any LatchkeyError)?.description ?? String(describing: error))
                    {
                        logged(account: decision.account, outcome, reason)
                    }
                    if AccountService.needsSignIn(error) { door.signInNeeded(record, error) }
                    throw error
                }
            case .fireReleaseHook:
                settings.hooks.fire(
                    HookEvent(
                        .release, provider: record.provider, account: record.label, time: Date(), requester: requester.description,
                        forwarded: door.isForwarded))
            case .handOver:
                if let released { return released }
            case .refuse(let refusal):
                throw refusal
            }
        }
        throw BrokerError.malformedRequest(reason: "the release ended without an answer")
    }
}
