import Foundation
public import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyVault

/// The broker on the other side of the agent's socket: each request goes to `latchkey agent`
/// (on this machine, or through `ssh -R` on another), which answers it with its own `LocalBroker`.
///
/// Where no agent answers, this machine's broker does: the default socket with nothing behind it,
/// one that closes unanswered (an agent stopping), or one another user serves (with a warning).
/// A socket the person named with `LATCHKEY_AGENT` is not passed over: a forwarded host has no
/// vault to fall back on. When the agent says only a sign-in can help and this command shares
/// its vault at a terminal, the sign-in happens here, as without an agent.
public struct AgentBroker: Broker {
    let endpoint: AgentSocket.Endpoint
    /// This machine's broker, for when no agent answers or a sign-in is needed here.
    let local: any Broker
    /// The vault this command would open: an agent's refusal naming it may be signed in for here.
    let localVault: String?
    /// Whether a person is at this command's terminal to sign in.
    let hasTerminal: @Sendable () -> Bool
    /// Says what the agent waits for (a person's approval) and why a socket was passed over.
    let say: @Sendable (String) -> Void

    public init(
        endpoint: AgentSocket.Endpoint, local: any Broker, localVault: String?, hasTerminal: @escaping @Sendable () -> Bool,
        say: @escaping @Sendable (String) -> Void
    ) {
        self.endpoint = endpoint
        self.local = local
        self.localVault = localVault
        self.hasTerminal = hasTerminal
        self.say = say
    }

    public func token(_ request: TokenRequest) async throws -> TokenRelease {
        guard let answer = try await ask(.token(request)) else { return try await local.token(request) }
        guard case .token(let release) = answer else { throw unexpected(answer, for: .token(request)) }
        return release
    }

    public func proof(_ request: ProofRequest) async throws -> ProofRelease {
        guard let answer = try await ask(.proof(request)) else { return try await local.proof(request) }
        guard case .proof(let release) = answer else { throw unexpected(answer, for: .proof(request)) }
        return release
    }

    public func awsCredential(_ request: AWSCredentialRequest) async throws -> AWSRelease {
        guard let answer = try await ask(.awsCredential(request)) else { return try await local.awsCredential(request) }
        guard case .awsCredential(let release) = answer else { throw unexpected(answer, for: .awsCredential(request)) }
        return release
    }

    public func gitCredential(_ request: GitRequest) async throws -> GitRelease {
        guard let answer = try await ask(.gitCredential(request)) else { return try await local.gitCredential(request) }
        guard case .gitCredential(let release) = answer else { throw unexpected(answer, for: .gitCredential(request)) }
        return release
    }

    public func registryCredential(_ request: RegistryRequest) async throws -> RegistryRelease {
        guard let answer = try await ask(.registryCredential(request)) else { return try await local.registryCredential(request) }
        guard case .registryCredential(let release) = answer else { throw unexpected(answer, for: .registryCredential(request)) }
        return release
    }

    public func status(_ request: StatusRequest) async throws -> StatusReply {
        guard let answer = try await ask(.status(request)) else { return try await local.status(request) }
        guard case .status(let reply) = answer else { throw unexpected(answer, for: .status(request)) }
        return reply
    }

    public func answer(_ request: ApprovalRequest) async throws {
        guard let answer = try await ask(.approval(request)) else { return try await local.answer(request) }
        guard case .approval = answer else { throw unexpected(answer, for: .approval(request)) }
    }

    /// Never through the agent: a sign-in needs the person where the agent runs, who may not be
    /// at that machine, and the agent never starts one for a client.
    public func moreScope(_ request: ScopeRequest) async throws {
        let selector = AccountSelector(parsing: request.selector)
        let command = "latchkey login \(selector) " + request.scopes.map { "--scope \($0)" }.joined(separator: " ")
        throw BrokerError.scopeThroughAgent(account: selector.description, scopes: request.scopes, command: command)
    }

    // MARK: - The exchange

    /// The agent's final answer to `request`, or `nil` when this machine's broker should answer.
    /// The exchange blocks on the socket, so it runs on a thread of its own, never one of Swift's
    /// cooperative threads (a release may wait a minute for a person).
    private func ask(_ request: BrokerRequest) async throws -> BrokerAnswer? {
        let outcome: Result<BrokerAnswer?, any Error> = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: Result { try exchange(request) }) }
            thread.name = "latchkey-agent-exchange"
            thread.start()
        }
        return try outcome.get()
    }

    private func exchange(_ request: BrokerRequest) throws -> BrokerAnswer? {
        var client: AgentClient
        do {
            client = try AgentClient(endpoint: endpoint)
        } catch {
            if endpoint.isExplicit { throw error }
            // Another user's socket at the default path: this machine's vault answers instead, and
            // the person hears of the trap.
            if error.isUntrusted { say("warning: " + error.description) }
            return nil
        }
        let answer: BrokerAnswer
        do {
            answer = try client.exchange(request, notice: say)
        } catch {
            // The default socket took the connection and closed it unanswered (an agent too busy,
            // or stopping): as when none answers there, this machine's vault answers.
            guard case .closed = error, !endpoint.isExplicit else { throw error }
            return nil
        }
        if case .refused(let refusal) = answer {
            let sharesVault = refusal.vault != nil && refusal.vault == localVault
            if refusal.signIn != nil && sharesVault && hasTerminal() { return nil }
            throw refusal
        }
        return answer
    }

    private func unexpected(_ answer: BrokerAnswer, for request: BrokerRequest) -> AgentClientError {
        .mismatch(
            path: endpoint.path,
            WireMismatch(.malformedField(object: "answer", reason: "it does not answer a \(request.operation) request"), kind: "answer"))
    }
}
