import ArgumentParser
import Foundation
import LatchkeyCore
import LatchkeyTUI

/// `latchkey screen`: the full-screen interface. Falls back to `status` when it cannot draw.
struct ScreenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screen", abstract: "Open the full-screen interface (the default when run in a terminal).")

    /// On the main actor, hence the main thread: ncurses must live where SIGWINCH is delivered,
    /// and the loop blocks this thread (the sign-in work runs in detached tasks meanwhile).
    @MainActor
    func run() async throws {
        let context = CommandContext()
        let typed = context.environment["LATCHKEY_PASSPHRASE_FILE"] == nil ? TypedPassphrase() : nil
        let keystore: any Keystore =
            typed.map { typed in
                let unlockTimeout = (try? context.configuration.get())?.unlockTimeout ?? LatchkeyConfiguration().unlockTimeout
                return VaultKeystore(
                    path: LatchkeyPaths(environment: context.environment).vaultFile, passphrase: typed, cacheKey: true,
                    unlockDuration: TimeInterval(unlockTimeout))
            } ?? context.keystore
        let outcome: Screen.Outcome
        do {
            outcome = try Screen.run(environment: context.environment, catalog: context.catalog, keystore: keystore, typedPassphrase: typed)
        } catch {
            Output.info("latchkey: \(error.description); showing `latchkey status` instead.")
            var status = try StatusCommand.parse([])
            try await status.run()
            return
        }
        if case .interrupted(let signal) = outcome { throw ExitCode(128 + signal) }
    }
}
