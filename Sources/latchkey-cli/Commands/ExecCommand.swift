import ArgumentParser
import CLatchkeySys
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyVault

/// `latchkey exec SELECTOR -- command…`: the command replaces this process with a valid token in
/// its environment, where other users cannot read it (argv is world-readable in /proc).
struct ExecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command with a valid access token in its environment as LATCHKEY_ACCESS_TOKEN.",
        usage: "latchkey exec <selector> [--id-token] [--min-ttl <seconds>] -- <command> [<argument> ...]",
        discussion:
            "The command replaces latchkey (its exit status and signals are the caller's to see). A command that cannot be found exits 127, one that cannot be run 126, as in the shell."
    )

    /// The environment variables the tokens are passed in.
    static let accessTokenVariable = "LATCHKEY_ACCESS_TOKEN"
    static let idTokenVariable = "LATCHKEY_ID_TOKEN"
    /// `Bearer` or `DPoP`: the `Authorization` scheme the token goes with (RFC 9449 §7.1).
    static let tokenTypeVariable = "LATCHKEY_TOKEN_TYPE"
    /// `PROVIDER:SUBJECT`, naming exactly this account, for `latchkey proof` inside the command.
    static let accountVariable = "LATCHKEY_ACCOUNT"

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @Flag(name: .customLong("id-token"), help: "Also set LATCHKEY_ID_TOKEN to the account's ID token.") var idToken = false
    @OptionGroup var narrowing: NarrowingOptions
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions
    @Argument(parsing: .postTerminator, help: "The command to run and its arguments, after --.") var command: [String] = []

    @OptionGroup var options: KeystoreOptions

    func validate() throws {
        if command.isEmpty { throw ValidationError("name the command to run after --, such as `latchkey exec \(selector) -- curl …`") }
    }

    func run() async throws {
        try await Failure.reporting {
            // Values inherited from an outer `latchkey exec` must not pass for this account's.
            var environment = ProcessInfo.processInfo.environment
            for name in [Self.idTokenVariable, Self.tokenTypeVariable, Self.accountVariable] { environment[name] = nil }
            let release = try await options.broker(person: CommandLineInteraction.atTerminal()).token(
                TokenRequest(
                    selector: selector, minimumLifetime: minimumLifetime.seconds, tokens: idToken ? .both : .access,
                    narrowing: narrowing.narrowing, workingDirectory: workingDirectory))
            environment[Self.accessTokenVariable] = try release.requiredAccessToken().exposedValue
            environment[Self.tokenTypeVariable] = release.tokenType
            environment[Self.accountVariable] = "\(release.provider):\(release.subject)"
            if idToken { environment[Self.idTokenVariable] = try release.requiredIDToken().exposedValue }

            let error = Self.replaceProcess(command: command, environment: environment)
            let reason = error == ENOENT ? "command not found" : String(cString: strerror(error))
            Output.error("exec: \(TerminalText.sanitized(command[0], maxLength: 200)): \(reason)")
            throw ExitCode(Failure.exitCode(forExecError: error))
        }
    }

    /// Runs `command` in place of this process; returns only when it could not, with the errno value.
    private static func replaceProcess(command: [String], environment: [String: String]) -> Int32 {
        var arguments = command.map { strdup($0) } + [nil]
        var variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            arguments.forEach { free($0) }
            variables.forEach { free($0) }
        }
        return lk_exec(command[0], &arguments, &variables)
    }
}
