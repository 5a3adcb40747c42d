import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyKeystore
import LatchkeyTUI
import LatchkeyVault

/// `latchkey screen`: the full-screen interface. Falls back to `status` when it cannot draw.
struct ScreenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screen", abstract: "Open the full-screen interface (the default when run in a terminal).")

    @OptionGroup var options: KeystoreOptions

    /// On the main actor, hence the main thread: ncurses must live where SIGWINCH is delivered,
    /// and the loop blocks this thread (the sign-in work runs in detached tasks meanwhile).
    @MainActor
    func run() async throws {
        let typed = ProcessInfo.processInfo.environment["LATCHKEY_PASSPHRASE_FILE"] == nil ? TypedPassphrase() : nil
        let context = options.context(passphrase: typed)
        // Only the vault asks for a passphrase; the Secret Service unlocks with the desktop session.
        let prompt = context.keystore.backendName == "vault" ? typed : nil
        let outcome: Screen.Outcome
        do {
            outcome = try Screen.run(
                environment: context.environment, service: context.service, typedPassphrase: prompt)
        } catch {
            Output.info("latchkey: \(error.description); showing `latchkey status` instead.")
            let status = try StatusCommand.parse([])
            try await status.run()
            return
        }
        if case .interrupted(let signal) = outcome { throw ExitCode(128 + signal) }
    }
}
