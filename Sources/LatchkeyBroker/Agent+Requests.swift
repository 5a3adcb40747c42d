import Foundation
import LatchkeyAccounts
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeyOAuth
import LatchkeyVault

/// What the agent answers: a `LocalBroker` behind each connection, its door the socket the
/// connection came in by.
extension Agent {
    /// Answers one request line; every failure becomes the client's final line with its message
    /// and kind, so a bad request costs the client its answer and nobody else anything.
    func handle(_ line: [UInt8], on connection: AgentConnection) async {
        let answer: BrokerAnswer?
        do {
            let (request, claimed) = try Self.decode(line)
            answer = try await self.answer(request, claimed: claimed, on: connection)
        } catch {
            answer = .refused(refusal(for: error, forwarded: connection.kind == .forwarded))
        }
        if let answer { connection.send(answer) }
    }

    private static func decode(_ line: [UInt8]) throws(AgentError) -> (BrokerRequest, ClientClaim?) {
        do {
            return try BrokerRequest.decode(line)
        } catch {
            throw .mismatch(error)
        }
    }

    /// The final answer, or `nil` for a `watch` connection, which stays open.
    private func answer(_ request: BrokerRequest, claimed: ClientClaim?, on connection: AgentConnection) async throws -> BrokerAnswer? {
        let forwarded = connection.kind == .forwarded
        guard !forwarded || request.isForForwardedHosts else { throw AgentError.notForForwarded(operation: request.operation) }
        let broker = broker(for: connection, claimed: claimed)
        switch request {
        case .token(let asked): return .token(try await broker.token(asked))
        case .proof(let asked): return .proof(try await broker.proof(asked))
        case .awsCredential(let asked): return .awsCredential(try await broker.awsCredential(asked))
        case .gitCredential(let asked): return .gitCredential(try await broker.gitCredential(asked))
        case .registryCredential(let asked): return .registryCredential(try await broker.registryCredential(asked))
        case .status(let asked): return .status(try await broker.status(asked))
        case .approval(let asked):
            try await broker.answer(asked)
            return .approval
        case .watch:
            confirmations.watch(connection)
            return nil
        }
    }

    /// The broker for one connection: this agent's keystore and settings, the door the
    /// connection came in by, its releases asked of a person through the agent's confirmations
    /// (the client told it waits).
    func broker(for connection: AgentConnection, claimed: ClientClaim?) -> LocalBroker {
        let forwarded = connection.kind == .forwarded
        let confirmations = self.confirmations
        let ask: @Sendable (String, Requester, Int) async -> ReleaseDecision.Answer = { account, requester, seconds in
            await confirmations.ask(account: account, requester: requester, timeout: .seconds(seconds), connection: connection) {
                waiting in
                connection.send(
                    .pending(
                        "\(account) needs a person's approval: request \(waiting.id) waits up to \(seconds) s"
                            + " (`latchkey approve \(waiting.id)` where the agent runs, or its screen)"),
                    final: false)
            }
        }
        let answer: @Sendable (Int, Bool) -> Bool = { id, approve in confirmations.answer(id, approve: approve) }
        let signInNeeded: @Sendable (AccountRecord, any Error) -> Void = { [self] record, error in
            needsSignIn(record, because: error, hooks: settings().hooks)
        }
        let door = LocalBroker.Door(
            kind: .agent(forwarded: forwarded), requester: Requester(connection: connection, claimed: claimed), ask: ask,
            approvals: forwarded ? nil : answer, signInNeeded: signInNeeded)
        return LocalBroker(
            settings: { [self] in settings() }, accounts: { [self] settings, directory in service(settings, workingDirectory: directory) },
            door: door, log: { [self] entry in if let problem = log.append(entry) { options.say(problem) } }, memory: memory,
            say: options.say)
    }

    // MARK: - Failures

    /// The refusal for `error`: its message and kind. An account only a sign-in can help names
    /// itself and the vault, so a client on this machine with the same vault can sign it in and
    /// ask again; a forwarded one is told where.
    func refusal(for error: any Error, forwarded: Bool) -> BrokerRefusal {
        guard let error = error as? any LatchkeyError else {
            if error is CancellationError { return BrokerRefusal(message: "cancelled", category: .unavailable) }
            return BrokerRefusal(
                message: "unexpected error: \(TerminalText.sanitized(String(describing: error), maxLength: 300))", category: .unexpected)
        }
        var refusal = BrokerRefusal(message: error.description, category: error.category)
        // A stronger or fresher sign-in (`--acr`, `--max-age`) is a sign-in too, and the agent
        // starts none for a client.
        if AccountService.needsSignIn(error) || error is StepUpError {
            refusal.signIn = Self.signInSelector(for: error)
            refusal.vault = forwarded ? nil : vaultPath
            if forwarded { refusal.message = error.description + " (on the machine where the agent runs: this host holds no vault)" }
        }
        return refusal
    }

    /// `PROVIDER:ACCOUNT` as `latchkey login` takes it, for errors that name one account.
    static func signInSelector(for error: any Error) -> String? {
        if let account = AccountService.account(needingSignIn: error) { return "\(account.provider):\(account.name)" }
        if let stepUp = error as? StepUpError { return "\(stepUp.account.provider):\(stepUp.account.name)" }
        if case AccountSelectionError.notSignedIn(let selector, _) = error { return selector.description }
        return nil
    }
}
