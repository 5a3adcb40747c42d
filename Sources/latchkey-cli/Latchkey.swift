import ArgumentParser
import CLatchkeySys
import Foundation
import LatchkeyCore

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
            ProvidersCommand.self, LoginCommand.self, StatusCommand.self, TokenCommand.self, RefreshCommand.self, DefaultCommand.self,
            LogoutCommand.self,
            UnlockCommand.self,
            LockCommand.self, ScreenCommand.self, DoctorCommand.self,
        ],
        // In a terminal, `latchkey` alone opens the screen; in pipes and scripts it prints the status.
        defaultSubcommand: isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 ? ScreenCommand.self : StatusCommand.self)

    /// Hardened before anything is parsed or read: no core dump, no ptrace attach.
    static func main() async {
        _ = lk_harden_process()
        await main(nil)
    }
}
