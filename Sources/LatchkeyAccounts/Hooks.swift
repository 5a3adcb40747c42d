public import Foundation
import LatchkeyEssentials
public import LatchkeyProviders
package import LatchkeySupport
import LatchkeyVault
import Synchronization

/// What a hook is told, as JSON on its stdin: which event, which account, when and why. Never a
/// token: a hook is for notifying a person, and a program that wants a token asks for one.
public struct HookEvent: Codable, Sendable, Equatable {
    /// `signin`, `refresh_failed`, `expiring`, `reauth_needed` or `release`.
    public var event: String
    public var provider: String
    public var account: String
    public var time: Date
    public var reason: String?
    /// `release`: who asked, and whether over a forwarded socket.
    public var requester: String?
    public var forwarded: Bool?
    /// `expiring`: when the token expires.
    public var expiresAt: Date?

    enum CodingKeys: String, CodingKey {
        case event, provider, account, time, reason, requester, forwarded
        case expiresAt = "expires_at"
    }

    public init(
        _ kind: HookSettings.Event, provider: String, account: String, time: Date, reason: String? = nil, requester: String? = nil,
        forwarded: Bool? = nil, expiresAt: Date? = nil
    ) {
        event = String(kind.rawValue.dropFirst("on_".count))
        self.provider = provider
        self.account = account
        self.time = time
        self.reason = reason
        self.requester = requester
        self.forwarded = forwarded
        self.expiresAt = expiresAt
    }

    var kind: HookSettings.Event? { HookSettings.Event(rawValue: "on_" + event) }
}

/// Runs config.toml's hooks. A hook runs as a second-factor plugin does (`ChildProcess`): only if
/// `TrustedProgram` accepts it, in a process group of its own, its output capped and its whole
/// group killed at the deadline; its failure is reported and never fails what fired it.
public struct Hooks: Sendable {
    public let settings: HookSettings
    private let environment: [String: String]
    /// Says a hook's failure (on stderr, for the command or the agent).
    private let report: @Sendable (String) -> Void
    private let running = RunningHooks()
    /// The hooks' children, so their owner can end them (`ChildProcessGroups.endAll`).
    private let children: ChildProcessGroups?

    /// What a hook may write on stdout before it is stopped (stdout is read and dropped).
    static let outputLimit = 64 * 1024
    /// Hooks the agent runs at once; an event beyond that is skipped and said.
    static let concurrentLimit = 8
    /// Variables a hook never inherits: tokens from an outer `latchkey exec`, the passphrase file.
    static let withheldVariables = ["LATCHKEY_ACCESS_TOKEN", "LATCHKEY_ID_TOKEN", "LATCHKEY_PASSPHRASE_FILE"]

    package init(
        settings: HookSettings, environment: [String: String], children: ChildProcessGroups? = nil,
        report: @escaping @Sendable (String) -> Void
    ) {
        self.settings = settings
        self.children = children
        self.environment = environment
        self.report = report
    }

    /// Runs the event's hook, if config.toml names one, and waits for it (at most its timeout):
    /// for commands, which would otherwise exit before their hook ran.
    public func run(_ event: HookEvent) async {
        guard let kind = event.kind, let command = settings.commands[kind] else { return }
        let timeout = TimeInterval(settings.timeout)
        let environment = hookEnvironment(for: event)
        let problem: String? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    returning: Self.runBlocking(command, event: event, environment: environment, timeout: timeout, owner: children))
            }
        }
        if let problem { report("hook \(kind.rawValue) (\(TerminalText.sanitized(command[0], maxLength: 200))) \(problem)") }
    }

    /// Starts the event's hook without waiting (the agent, which must go on serving); skipped and
    /// said when `concurrentLimit` hooks still run.
    public func fire(_ event: HookEvent) {
        guard let kind = event.kind, settings.commands[kind] != nil else { return }
        guard running.start(limit: Self.concurrentLimit) else {
            report("hook \(kind.rawValue) skipped: \(Self.concurrentLimit) hooks are still running")
            return
        }
        let hooks = self
        Task.detached {
            await hooks.run(event)
            hooks.running.finish()
        }
    }

    /// The caller's environment without secrets, plus the event's fields for programs that
    /// read no JSON (`notify-send "$LATCHKEY_ACCOUNT"` in `sh -c`), made inert for a terminal.
    func hookEnvironment(for event: HookEvent) -> [String: String] {
        var variables = environment
        for name in Self.withheldVariables { variables[name] = nil }
        variables["LATCHKEY_EVENT"] = event.event
        variables["LATCHKEY_PROVIDER"] = event.provider
        variables["LATCHKEY_ACCOUNT"] = TerminalText.sanitized(event.account, maxLength: 200)
        variables["LATCHKEY_REASON"] = event.reason.map { TerminalText.sanitized($0, maxLength: 500) }
        return variables
    }

    /// Runs one hook; what went wrong, or `nil`.
    static func runBlocking(
        _ command: [String], event: HookEvent, environment: [String: String], timeout: TimeInterval, owner: ChildProcessGroups? = nil
    ) -> String? {
        let program: String
        do {
            program = try TrustedProgram.open(command[0]).path
        } catch {
            return "was not run: \(error)"
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(event) else { return "was not run: the event could not be encoded" }
        let outcome: ChildProcess.Outcome
        do {
            outcome = try ChildProcess.run(
                path: program, arguments: Array(command.dropFirst()), environment: environment, input: Array(json) + [UInt8(ascii: "\n")],
                timeout: timeout, outputLimit: outputLimit, stopAtNewline: false, owner: owner)
        } catch {
            return "cannot be started: \(TerminalText.sanitized(error.description, maxLength: 200))"
        }
        let errorText = String(decoding: outcome.errorOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let said = TerminalText.sanitized(errorText, maxLength: 300)
        let detail = said.isEmpty ? "" : " (it said: \(said))"
        if outcome.tooLarge { return "wrote more than \(outputLimit / 1024) KiB and was stopped" }
        if outcome.timedOut { return "did not finish within \(Int(timeout)) s and was stopped\(detail)" }
        guard let status = outcome.status else { return "was killed by a signal\(detail)" }
        return status == 0 ? nil : "exited with status \(status)\(detail)"
    }
}

/// How many fired hooks still run.
private final class RunningHooks: Sendable {
    private let count = Mutex(0)

    func start(limit: Int) -> Bool {
        count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func finish() { count.withLock { $0 -= 1 } }
}
