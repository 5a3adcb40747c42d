import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyBrokerWire
import LatchkeyVault
import LatchkeyProviders
import LatchkeyAccounts
import LatchkeyKeystore
import LatchkeyOAuth
import LatchkeyClouds
import LatchkeyCredentialHelpers

/// What the agent answers, request by request.
extension Agent {
    /// Answers one request line; every failure becomes the client's final line with its message
    /// and exit status, so a bad request costs the client its answer and nobody else anything.
    func handle(_ line: [UInt8], on connection: AgentConnection) async {
        let answer: AgentAnswer?
        do {
            let request: AgentRequest
            do {
                request = try AgentWire.decode(AgentRequest.self, from: line)
            } catch {
                throw AgentError.malformedRequest(reason: "not one JSON object of the agent's protocol")
            }
            answer = try await self.answer(request, on: connection)
        } catch {
            answer = failure(error, forwarded: connection.kind == .forwarded)
        }
        if let answer { connection.send(answer) }
    }

    /// The final answer, or `nil` for a `watch` connection, which stays open.
    private func answer(_ request: AgentRequest, on connection: AgentConnection) async throws -> AgentAnswer? {
        guard request.version == AgentWire.version else { throw AgentError.unsupportedVersion(request.version) }
        guard let operation = AgentRequest.Operation(rawValue: request.operation) else {
            throw AgentError.unknownOperation(request.operation)
        }
        let forwarded = connection.kind == .forwarded
        switch operation {
        case .token:
            guard let selector = request.selector, !selector.isEmpty else { throw AgentError.malformedRequest(reason: "no selector") }
            let lifetime = request.minimumLifetime ?? Self.refreshWindow
            guard lifetime >= 0 else { throw AgentError.malformedRequest(reason: "min_ttl must not be negative") }
            if request.refused != nil && (request.narrowing != nil || (request.tokens ?? .access) != .access) {
                throw AgentError.malformedRequest(reason: "refused goes with the account's own access token")
            }
            return try await release(
                AccountSelector(parsing: selector), minimumLifetime: lifetime, tokens: request.tokens ?? .access,
                narrowing: request.narrowing, refused: request.refused, for: request, on: connection)
        case .awsCredential:
            return try await awsCredential(request, on: connection)
        case .dpopProof:
            return try await proof(request, on: connection)
        case .gitCredential:
            return try await gitCredential(request, on: connection)
        case .registryCredential:
            return try await registryCredential(request, on: connection)
        case .status:
            return try await status(for: request, on: connection)
        case .approve, .deny:
            guard !forwarded else { throw AgentError.notForForwarded(operation: operation.rawValue) }
            guard let id = request.confirmation else { throw AgentError.malformedRequest(reason: "no request id") }
            guard confirmations.answer(id, approve: operation == .approve) else { throw AgentError.noSuchConfirmation(id) }
            return AgentAnswer(ok: true)
        case .watch:
            guard !forwarded else { throw AgentError.notForForwarded(operation: operation.rawValue) }
            confirmations.watch(connection)
            return nil
        }
    }

    // MARK: - Tokens

    /// A token of `selector`'s account for the client on `connection`, if it may have one
    /// (`release(_:for:on:naming:fetch:)`), a forwarded client only for a resource the provider
    /// file lists. Refreshed first when needed, or when `refused` names the token the agent holds
    /// (`refreshing(_:refused:_:)`). With `narrowing`, the access token is that account's for
    /// that resource and those scopes.
    private func release(
        _ selector: AccountSelector, minimumLifetime: Int, tokens: AgentRequest.Tokens, narrowing: TokenNarrowing? = nil,
        refused: String? = nil, for request: AgentRequest, on connection: AgentConnection
    ) async throws -> AgentAnswer {
        if let resource = narrowing?.resource, let problem = ResourceIndicator.problem(resource) {
            throw NarrowingError.invalidResource(problem: problem)
        }
        return try await release(
            selector, for: request, on: connection,
            naming: { provider in narrowing?.resource.map { [.resource: provider?.listedResources.contains($0) ?? false] } ?? [:] },
            fetch: { record, service in
                try await token(
                    of: record, minimumLifetime: minimumLifetime, tokens: tokens, narrowing: narrowing, refused: refused, service)
            })
    }

    /// What `fetch` gets of `selector`'s account for the client on `connection`, if it may have
    /// anything (`ReleaseDecision`): a forwarded client only of an account marked `forward =
    /// true`, chosen among those alone, and only what `naming` says the account's provider file
    /// (`nil`: not configured here) lists; an account marked `confirm = true` only once a person
    /// agreed. Logged, and heard by the `on_release` hook.
    private func release(
        _ selector: AccountSelector, for request: AgentRequest, on connection: AgentConnection,
        naming: (_ provider: Provider?) -> [ReleaseDecision.Named: Bool],
        fetch: (AccountRecord, AccountService) async throws -> AgentAnswer
    ) async throws -> AgentAnswer {
        let settings = settings()
        let forwarded = connection.kind == .forwarded
        let service = service(settings, workingDirectory: forwarded ? nil : request.workingDirectory)
        let requester = Requester(connection: connection, claimed: request.client)
        func logged(account: String, _ outcome: ReleaseLog.Entry.Outcome, _ reason: String? = nil) {
            if let problem = log.append(
                ReleaseLog.Entry(
                    time: Date(), account: account, requester: requester.description, forwarded: forwarded, outcome: outcome,
                    reason: reason))
            {
                options.say(problem)
            }
        }
        let record: AccountRecord
        if forwarded {
            // Among the shared accounts only: a selector that names another, or nothing, gets the
            // words one that names no account at all gets, and an error listing candidates lists
            // only shared ones.
            do {
                record = try selector.select(from: try await records.records().filter { isVisible($0, settings, forwarded: true) })
            } catch AccountSelectionError.notSignedIn {
                logged(account: selector.description, .refused, "no account shared with forwarded connections")
                throw ReleaseRefusal.notShared
            }
        } else {
            let all = try await records.records()
            record = try (service.here?.selector(selector, among: all) ?? selector).select(from: all)
        }
        let sharing = settings.sharing(of: record)
        let decision = ReleaseDecision(
            account: "\(record.provider):\(record.label)", provider: record.provider, door: .agent(forwarded: forwarded),
            forward: sharing.forward, confirm: sharing.confirm, confirmSeconds: settings.configuration.agent.confirmTimeout)
        var answer = AgentAnswer(ok: true)
        var actions = decision.chosen(naming: naming(try? settings.catalog.provider(named: record.provider)))[...]
        while let action = actions.popFirst() {
            switch action {
            case .log(let outcome, let reason):
                logged(account: decision.account, outcome, reason)
            case .ask(let seconds):
                actions = decision.answered(await ask(decision, seconds: seconds, requester: requester, on: connection))[...]
            case .fetchToken:
                do {
                    answer = try await fetch(record, service)
                    actions = decision.tokenReady()[...]
                } catch {
                    for case .log(let outcome, let reason) in decision.tokenFailed(
                        reason: (error as? any LatchkeyError)?.description ?? String(describing: error))
                    {
                        logged(account: decision.account, outcome, reason)
                    }
                    if AccountService.needsSignIn(error) { needsSignIn(record, because: error, hooks: settings.hooks) }
                    throw error
                }
            case .fireReleaseHook:
                settings.hooks.fire(
                    HookEvent(
                        .release, provider: record.provider, account: record.label, time: Date(), requester: requester.description,
                        forwarded: forwarded))
            case .handOver:
                return answer
            case .refuse(let refusal):
                throw refusal
            }
        }
        throw AgentError.malformedRequest(reason: "the release ended without an answer")
    }

    /// Asks a person about `decision`'s release, telling the client it waits.
    private func ask(
        _ decision: ReleaseDecision, seconds: Int, requester: Requester, on connection: AgentConnection
    ) async -> ReleaseDecision.Answer {
        await confirmations.ask(account: decision.account, requester: requester, timeout: .seconds(seconds), connection: connection) {
            waiting in
            connection.send(
                .waiting(
                    "\(decision.account) needs a person's approval: request \(waiting.id) waits up to \(seconds) s"
                        + " (`latchkey approve \(waiting.id)` where the agent runs, or its screen)"),
                final: false)
        }
    }

    /// The tokens of `record` the request asks for, refreshed as needed; with `narrowing`, the
    /// access token for that resource and those scopes. An access token goes with the MCP server
    /// its provider file names (`mcp_url`), the one URL it is bound to.
    private func token(
        of record: AccountRecord, minimumLifetime: Int, tokens: AgentRequest.Tokens, narrowing: TokenNarrowing?, refused: String?,
        _ service: AccountService
    ) async throws -> AgentAnswer {
        let fresh = try await refreshing(
            try await service.validRecord(
                for: AccountSelector(provider: record.provider, account: record.subject), minimumLifetime: TimeInterval(minimumLifetime)),
            refused: refused, service)
        var answer = AgentAnswer(ok: true)
        answer.provider = fresh.provider
        answer.account = fresh.label
        if tokens != .id { answer.mcpURL = (try? service.catalog.provider(named: fresh.provider))?.protocolChoices?.mcpURL?.absoluteString }
        answer.proofBound = fresh.isProofBound && tokens != .id ? true : nil
        if let narrowing {
            guard tokens == .access else { throw AgentError.malformedRequest(reason: "resource and scope ask for an access token") }
            let narrowed = try await service.narrowedToken(
                for: AccountSelector(provider: fresh.provider, account: fresh.subject), narrowing,
                minimumLifetime: TimeInterval(minimumLifetime))
            answer.expiresAt = narrowed.expiresAt.map { Int(wholeSeconds: $0.timeIntervalSince1970) }
            answer.accessToken = narrowed.accessToken
        } else {
            answer.expiresAt = fresh.expiresAt.map { Int(wholeSeconds: $0.timeIntervalSince1970) }
            if tokens != .id { answer.accessToken = fresh.accessToken }
            if tokens != .access { answer.idToken = try service.token(of: fresh, idToken: true) }
        }
        return answer
    }

    /// `record`, refreshed now if `refused` is the `ath` of the access token it holds: a server
    /// has refused that token (a 401 to `mcp proxy`), so handing it out again would only be
    /// refused again. A hash of any other token changes nothing (the client's token is an old
    /// one; the current one is the answer). Judged under the keystore's lock, so two requests
    /// naming one refused token (a proxy's POST and GET) make one refresh, the second getting
    /// its result. A client holding the current token could ask again and again, so an account
    /// is refreshed this way at most once per `forcedRefreshInterval`; within it the request is
    /// refused, saying when to try again.
    private func refreshing(_ record: AccountRecord, refused: String?, _ service: AccountService) async throws -> AccountRecord {
        guard let refused, DPoPKey.accessTokenHash(record.accessToken) == refused else { return record }
        let key = "\(record.provider)|\(record.issuer)|\(record.subject)"
        let name = "\(record.provider):\(record.label)"
        return try await service.refresh(AccountSelector(provider: record.provider, account: record.subject)) { current in
            guard DPoPKey.accessTokenHash(current.accessToken) == refused else { return false }
            if let wait = self.forcedRefreshWait(for: key, now: Date()) { throw AgentError.refreshedRecently(account: name, seconds: wait) }
            self.options.say("refreshing \(TerminalText.sanitized(name, maxLength: 200)): a client's server refused its token")
            return true
        }
    }

    /// A DPoP proof (RFC 9449 §4.2) for one request with the account's current access token,
    /// signed here with the account's key, which never leaves the vault: how a client holding a
    /// bound token (`mcp proxy` on a forwarded host) uses it. Released as the token is (the
    /// same decision: sharing, `confirm`, the log, the hook), a forwarded host only for the URL
    /// the provider file names (`mcp_url`), and only for the token the agent holds now (`ath`),
    /// read again at signing, so a proof never goes with an old token or one the client did not
    /// get here.
    private func proof(_ request: AgentRequest, on connection: AgentConnection) async throws -> AgentAnswer {
        guard let selector = request.selector, !selector.isEmpty else { throw AgentError.malformedRequest(reason: "no selector") }
        guard let target = request.dpop else { throw AgentError.malformedRequest(reason: "no dpop: the request to sign for") }
        let (method, url) = try target.checked()
        return try await release(
            AccountSelector(parsing: selector), for: request, on: connection,
            naming: { provider in [.proofURL: AgentRequest.ProofTarget.isNamed(url, by: provider)] },
            fetch: { chosen, service in
                let record =
                    try await records.records().first { $0.provider == chosen.provider && $0.subject == chosen.subject } ?? chosen
                var answer = AgentAnswer(ok: true)
                answer.provider = record.provider
                answer.account = record.label
                answer.proof = Secret(
                    try service.proof(for: record, tokenHash: target.tokenHash, method: method, url: url, nonce: target.nonce))
                return answer
            })
    }

    /// AWS credentials for a role, from STS with the account's ID token, which stays here: the
    /// client (a forwarded host above all) gets only the credentials. The same call and the same
    /// credentials kept per (account, role) as `latchkey aws-credential` without an agent.
    ///
    /// A forwarded host gets them only for a role the provider file lists, and may not choose
    /// where the ID token goes: an STS endpoint it names must be the provider file's, and its
    /// environment is not heeded (this agent's is). A local client's environment is, as it would
    /// be without the agent.
    private func awsCredential(_ request: AgentRequest, on connection: AgentConnection) async throws -> AgentAnswer {
        guard let selector = request.selector, !selector.isEmpty else { throw AgentError.malformedRequest(reason: "no selector") }
        let asked = request.aws ?? AgentRequest.AWSRole()
        if let duration = asked.duration, !AWSNames.durations.contains(duration) {
            throw AgentError.malformedRequest(reason: "duration must be from 900 to 43200 seconds")
        }
        let minimumLifetime = request.minimumLifetime ?? Self.refreshWindow
        guard minimumLifetime >= 0 else { throw AgentError.malformedRequest(reason: "min_ttl must not be negative") }
        let forwarded = connection.kind == .forwarded
        let environment =
            forwarded
            ? ProcessInfo.processInfo.environment
            : (asked.environment ?? [:]).filter { AgentRequest.AWSRole.environmentKeys.contains($0.key) }
        let options = AWSCredentialOptions(
            roleARN: asked.roleARN, sessionName: asked.sessionName, duration: asked.duration, stsEndpoint: asked.stsEndpoint)
        return try await release(
            AccountSelector(parsing: selector), for: request, on: connection,
            naming: { provider in
                let settings = provider?.aws ?? AWSSettings()
                var naming: [ReleaseDecision.Named: Bool] = [:]
                if let role = asked.roleARN { naming[.awsRole] = settings.listedRoles.contains(role) }
                if let endpoint = asked.stsEndpoint {
                    let named = try? AWSCredentialOptions.endpoint(endpoint)
                    naming[.stsEndpoint] = settings.stsEndpoint != nil && named == settings.stsEndpoint
                }
                return naming
            },
            fetch: { record, service in
                let credential = try await service.awsCredential(
                    for: AccountSelector(provider: record.provider, account: record.subject), options,
                    minimumLifetime: TimeInterval(minimumLifetime), environment: environment)
                var answer = AgentAnswer(ok: true)
                answer.provider = record.provider
                answer.account = record.label
                answer.expiresAt = Int(wholeSeconds: credential.expiresAt.timeIntervalSince1970)
                answer.aws = AgentAnswer.AWSKeys(
                    accessKeyID: credential.accessKeyID, secretAccessKey: credential.secretAccessKey, sessionToken: credential.sessionToken,
                    expiration: Int(wholeSeconds: credential.expiresAt.timeIntervalSince1970))
                return answer
            })
    }

    /// What git gets for a host in a provider's `git_hosts`, released like any token; a host no
    /// provider maps gets an answer without a credential, so git asks its other helpers.
    private func gitCredential(_ request: AgentRequest, on connection: AgentConnection) async throws -> AgentAnswer {
        let parsed = try GitCredentialRequest(parsing: request.git ?? "")
        guard let provider = try parsed.provider(in: settings().catalog.providers) else { return AgentAnswer(ok: true) }
        var answer = try await release(
            AccountSelector(provider: provider.name), minimumLifetime: request.minimumLifetime ?? Self.refreshWindow, tokens: .access,
            narrowing: AccountService.gitNarrowing(request.narrowing, for: provider), for: request, on: connection)
        if let token = answer.accessToken {
            answer.credential = Secret(GitCredential(username: provider.gitUsername, password: token).exposedAnswer)
            answer.accessToken = nil
        }
        return answer
    }

    /// What a container client gets for a registry in a provider's `registry_hosts`, mapped by the
    /// agent's own provider files (a forwarded host needs none), released like any token; a
    /// registry no provider lists gets an answer without a token.
    private func registryCredential(_ request: AgentRequest, on connection: AgentConnection) async throws -> AgentAnswer {
        let server = try RegistryServerURL(parsing: request.registry ?? "")
        guard let provider = try server.provider(in: settings().catalog.providers) else { return AgentAnswer(ok: true) }
        var answer = try await release(
            AccountSelector(provider: provider.name), minimumLifetime: request.minimumLifetime ?? Self.refreshWindow, tokens: .access,
            for: request, on: connection)
        answer.username = provider.registryUsername
        return answer
    }

    /// `latchkey status` of the accounts this connection may use: all of them locally, those
    /// marked `forward = true` over a forwarded socket.
    private func status(for request: AgentRequest, on connection: AgentConnection) async throws -> AgentAnswer {
        let settings = settings()
        let forwarded = connection.kind == .forwarded
        let service = service(settings, workingDirectory: forwarded ? nil : request.workingDirectory)
        let visible = try await records.records().filter { isVisible($0, settings, forwarded: forwarded) }
        let report = StatusReport(
            records: visible, keystore: records.backendName + (forwarded ? " (forwarded)" : ""), now: Date(),
            here: service.here.map { ($0.accounts, $0.path) })
        // A forwarded host hears only of the providers of the accounts it may use: the others,
        // and that they are configured here, are none of its business.
        let providers = settings.catalog.providers.filter { provider in !forwarded || visible.contains { $0.provider == provider.name } }
        var answer = AgentAnswer(ok: true)
        answer.report = try report.json()
        answer.lines = report.listing(providers: providers)
        return answer
    }

    /// Whether a connection may see `record` at all (`ReleaseDecision.isVisible`): a forwarded
    /// one only accounts marked `forward = true`, by their `[accounts]` table or provider file.
    private func isVisible(_ record: AccountRecord, _ settings: Settings, forwarded: Bool) -> Bool {
        ReleaseDecision.isVisible(forward: settings.sharing(of: record).forward, at: .agent(forwarded: forwarded))
    }

    // MARK: - Failures

    /// The final line for `error`: its message, and the exit status the command line gives it.
    /// An account only a sign-in can help names itself and the vault, so a client on this
    /// machine with the same vault can sign it in and ask again; a forwarded one is told where.
    func failure(_ error: any Error, forwarded: Bool) -> AgentAnswer {
        guard let error = error as? any LatchkeyError else {
            if error is CancellationError { return .failure("cancelled", exit: options.exitStatus(.unavailable)) }
            return .failure(
                "unexpected error: \(TerminalText.sanitized(String(describing: error), maxLength: 300))",
                exit: options.exitStatus(.unexpected))
        }
        var answer = AgentAnswer.failure(error.description, exit: options.exitStatus(error.category))
        if AccountService.needsSignIn(error) {
            answer.signIn = Self.signInSelector(for: error)
            answer.vault = forwarded ? nil : vaultPath
            if forwarded { answer.message = error.description + " (on the machine where the agent runs: this host holds no vault)" }
        }
        return answer
    }

    /// `PROVIDER:ACCOUNT` as `latchkey login` takes it, for errors that name one account.
    static func signInSelector(for error: any Error) -> String? {
        if let account = AccountService.account(needingSignIn: error) { return "\(account.provider):\(account.name)" }
        if case AccountSelectionError.notSignedIn(let selector, _) = error { return selector.description }
        return nil
    }
}
