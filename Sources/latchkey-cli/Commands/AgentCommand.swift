import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeyProviders
import LatchkeyVault
import Synchronization

/// The signal that ends `latchkey agent`, recorded by its handler.
private let agentSignal = Atomic<Int32>(0)

/// `latchkey agent`: serve tokens to this machine's processes and, through `ssh -R`, to others.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Serve tokens to other processes through a socket, here and forwarded over SSH.",
        discussion:
            "Runs in the foreground until interrupted. Commands find it through LATCHKEY_AGENT or $XDG_RUNTIME_DIR/latchkey/agent.sock. See latchkey(1), AGENT.",
        subcommands: [AgentRunCommand.self, AgentLogCommand.self],
        defaultSubcommand: AgentRunCommand.self)
}

struct AgentRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run the agent (what `latchkey agent` alone does).")

    @Option(help: "The local socket (default: $XDG_RUNTIME_DIR/latchkey/agent.sock).")
    var socket: String?
    @Option(
        name: .customLong("forward-socket"),
        help: "Also listen here for connections forwarded with ssh -R; they get only accounts marked forward = true.")
    var forwardSocket: String?

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let startup = StartupPassphrase(TerminalPassphrasePrompt())
            let context = options.context(passphrase: startup)
            if case .failure(let errors) = context.configuration {
                throw KeystoreError.configuration(errors.errors.map(\.description).joined(separator: "\n"))
            }
            let prompt = AgentTerminalPrompt(environment: context.environment)
            let agent = Agent(
                composition: context,
                options: Agent.Options(
                    socket: socket, forwardSocket: forwardSocket, say: AgentTerminalPrompt.say, announce: prompt.announce))
            // Unlocked now, while a person may be at the terminal; never asked again.
            _ = try await context.keystore.records()
            startup.close()
            for number in [SIGINT, SIGTERM, SIGHUP] { Foundation.signal(number) { agentSignal.store($0, ordering: .relaxed) } }
            let watcher = Task {
                while agentSignal.load(ordering: .relaxed) == 0 && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
                agent.stop()
            }
            prompt.answerFromTerminal(agent)
            defer { watcher.cancel() }
            try await agent.run()
            AgentTerminalPrompt.say("stopped")
        }
    }
}

/// `latchkey agent log`: the agent's releases, oldest first.
struct AgentLogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "List the tokens the agent released or refused: time, outcome, account, who asked.")

    @Flag(help: "Print the entries as a JSON array on stdout.") var json = false
    @Option(help: "Only the last N entries.") var last: Int?

    func run() async throws {
        try await Failure.reporting {
            let log = ReleaseLog(path: ReleaseLog.defaultPath(environment: ProcessInfo.processInfo.environment))
            var entries = try log.entries()
            if let last { entries = Array(entries.suffix(max(0, last))) }
            if json { return try Output.json(entries) }
            if entries.isEmpty { Output.info("No releases logged in \(log.path).") }
            entries.map(\.summary).forEach(Output.result)
        }
    }
}

/// `latchkey approve N` and `latchkey deny N`: answer a release that waits for a person.
struct ApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve", abstract: "Let a token release waiting for approval go ahead (its number is in the agent's prompt).")

    @Argument(help: "The request's number.") var id: Int

    func run() async throws { try await Self.answer(id, approve: true) }

    static func answer(_ id: Int, approve: Bool) async throws {
        try await Failure.reporting {
            try await Composition().broker(person: nil, say: { Output.error($0) }).answer(ApprovalRequest(id: id, approve: approve))
            Output.info(approve ? "Approved request \(id)." : "Denied request \(id).")
        }
    }
}

struct DenyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "deny", abstract: "Refuse a token release waiting for approval.")

    @Argument(help: "The request's number.") var id: Int

    func run() async throws { try await ApproveCommand.answer(id, approve: false) }
}
