import ArgumentParser
import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyBrokerWire
import LatchkeyVault
import LatchkeyBroker
import LatchkeyKeystore

/// `token`, `exec`, `git-credential`, `status` and the kubectl and container credential helpers
/// ask `latchkey agent` when `LATCHKEY_AGENT`
/// names its socket, or when the default socket answers; with neither they go on as without an
/// agent, from this machine's vault.
///
/// An agent named by `LATCHKEY_AGENT` that does not answer, or that runs as another user, is an
/// error (a forwarded host has no vault to fall back on); the default socket is only tried, and
/// one that another user's process serves, or whose directory is not this user's and private, is
/// passed over with a warning (`AgentClient.init(endpoint:)`). The agent's refusals end the command
/// with its message and exit status. When only a sign-in can help and this command shares the
/// agent's vault (same machine, same files) at a terminal, it signs in here, as without an agent.
enum ThroughAgent {
    /// The agent's final answer to `request`, or `nil` when the command should answer itself.
    /// `refused` says the agent's refusal (stderr; the container helper's protocol wants stdout).
    static func ask(
        _ request: AgentRequest, context: Composition, refused: (String) -> Void = { Output.error($0) }
    ) throws -> AgentAnswer? {
        guard let endpoint = AgentSocket.endpoint({ context.environment[$0] }) else { return nil }
        var client: AgentClient
        do {
            client = try AgentClient(endpoint: endpoint)
        } catch {
            if endpoint.isExplicit { throw error }
            // Another user's socket at the default path: this machine's vault answers instead,
            // and the person hears of the trap.
            if error.isUntrusted { Output.error("warning: " + error.description) }
            return nil
        }
        let answer: AgentAnswer
        do {
            answer = try client.exchange(request) { Output.error($0.message ?? "waiting for the agent") }
        } catch {
            // The default socket took the connection and closed it unanswered (an agent too busy,
            // or stopping): as when none answers there, this machine's vault answers.
            guard case .closed = error, !endpoint.isExplicit else { throw error }
            return nil
        }
        if answer.ok { return answer }
        let sharesVault = answer.vault != nil && answer.vault == (context.keystore as? VaultKeystore)?.path
        if answer.signIn != nil && sharesVault, let terminal = TerminalDevice.open() {
            terminal.close()
            return nil
        }
        refused(answer.message ?? "the agent refused")
        throw ExitCode(answer.exit ?? Failure.exitCode(for: .unexpected))
    }

    /// A `token` request for `selector` as this command was asked it, from the working directory.
    static func tokenRequest(
        _ selector: String, minimumLifetime: Int, tokens: AgentRequest.Tokens, narrowing: TokenNarrowing? = nil
    ) -> AgentRequest {
        AgentRequest(
            .token, selector: selector, minimumLifetime: minimumLifetime, tokens: tokens, narrowing: narrowing,
            workingDirectory: FileManager.default.currentDirectoryPath, client: .current())
    }
}
