import ArgumentParser
import CLatchkeySys
import Foundation
import LatchkeyEssentials
import LatchkeySupport
import LatchkeyVault

/// `latchkey`: parses the command line and hands each command to the core. Nothing else lives here.
@main
struct Latchkey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "Sign in to many OAuth 2.0 / OpenID Connect providers from the terminal and keep their tokens safe.",
        discussion:
            "Exit status: 0 success, 64 usage, 65 provider file errors, 66 no such provider or account, 69 unreachable or timed out, 76 response rejected, 77 vault locked or unreadable; doctor exits 1 when it finds a problem. See latchkey(1).",
        version: LatchkeyVersion.current,
        subcommands: [
            ProvidersCommand.self, LoginCommand.self, StatusCommand.self, TokenCommand.self, ProofCommand.self, ExecCommand.self,
            RefreshCommand.self,
            DefaultCommand.self, LogoutCommand.self, UnlockCommand.self, LockCommand.self, ScreenCommand.self, DemoCommand.self,
            DoctorCommand.self,
            GitCredentialCommand.self, KubectlCredentialCommand.self, KubeconfigCommand.self, DockerCredentialCommand.self,
            AgentCommand.self, ApproveCommand.self, DenyCommand.self, MCPCommand.self, AWSCredentialCommand.self,
            AWSConfigCommand.self, GCPCredentialCommand.self, GCPConfigCommand.self, OpenBaoTokenCommand.self, KeystoreCommand.self,
        ],
        // In a terminal, `latchkey` alone opens the screen; in pipes and scripts it prints the status.
        defaultSubcommand: isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 ? ScreenCommand.self : StatusCommand.self)

    /// Hardened before anything is parsed or read: no core dump, no ptrace attach. What the caller
    /// passed (signals, descriptors) is noted before anything is opened, for `latchkey exec`.
    static func main() async {
        _ = lk_harden_process()
        lk_remember_inherited_state()
        if let name = unknownCommand(in: CommandLine.arguments) {
            Output.error(
                "no such command '\(TerminalText.sanitized(name, maxLength: 80))'; commands: \(commandNames.joined(separator: ", "))")
            exit(withError: ExitCode(Failure.usage))
        }
        await main(nil)
    }

    /// Every subcommand's name, plus ArgumentParser's own `help`.
    static var commandNames: [String] {
        configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
    }

    /// The first argument when it names no command. The default subcommands take no positional
    /// argument, so without this check ArgumentParser would hand a mistyped command to them and
    /// complain about an "unexpected argument" instead.
    static func unknownCommand(in arguments: [String]) -> String? {
        guard arguments.count > 1, case let first = arguments[1], !first.hasPrefix("-"), !commandNames.contains(first) else { return nil }
        return first
    }
}
