import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeyProviders
import LatchkeySupport
import LatchkeyVault

struct UnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract:
            "Unlock the vault for a while, keeping its key in the kernel keyring, so scripts need no passphrase (openbao: copy its tokens for `latchkey token`)."
    )

    @Option(name: .customLong("for"), help: "How long: seconds, or a number with s, m or h (default 15m).")
    var duration: UnlockDuration = UnlockDuration(seconds: 900)

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let keystore = options.context().keystore
            let until = try await keystore.unlock(for: TimeInterval(duration.seconds))
            let time = until.formatted(date: .omitted, time: .standard)
            switch keystore.launcherWindow {
            case .copiedTokens:
                Output.info(
                    "The \(keystore.backendName) keystore's tokens are copied into the kernel keyring for `latchkey token` until \(time) (no passphrase: OpenBao's token reads them); `latchkey lock` drops the copies now."
                )
            case .cachedKey, .none:
                Output.info("The vault is unlocked until \(time); `latchkey lock` locks it now.")
            }
        }
    }
}
struct LockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock", abstract: "Lock the vault now: drop its key from the kernel keyring (openbao: drop its tokens' copies).")

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let context = options.context()
            if case .failure(let errors) = context.configuration {
                // Locking must work whatever config.toml holds: the passphrase vault is locked,
                // and what is wrong with the file is said.
                for error in errors.errors { Output.error(error.description) }
                let paths = LatchkeyPaths(environment: context.environment)
                let vault = VaultKeystore(path: paths.vaultFile, passphrase: TerminalPassphrasePrompt(), cacheKey: true)
                Output.info(vault.lock() ? "The vault is locked." : "The vault was not unlocked.")
                // Whichever keystore the file meant, the launcher answers nothing more.
                LauncherCopies(origin: .openBao(journal: paths.openBaoJournal), releasePolicy: nil, directories: nil).lock()
                return
            }
            let keystore = context.keystore
            switch keystore.launcherWindow {
            case .none(let reason):
                throw KeystoreError.noLauncherWindow(reason)
            case .copiedTokens:
                Output.info(
                    keystore.lock()
                        ? "The copies of the \(keystore.backendName) keystore's tokens are dropped from the kernel keyring."
                        : "The \(keystore.backendName) keystore's tokens were not copied (`latchkey unlock` copies them).")
            case .cachedKey:
                Output.info(keystore.lock() ? "The vault is locked." : "The vault was not unlocked.")
            }
        }
    }
}

/// `15m`, `1h`, `90s` or plain seconds.
struct UnlockDuration: ExpressibleByArgument {
    var seconds: Int

    init(seconds: Int) { self.seconds = seconds }

    init?(argument: String) {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600]
        var text = Substring(argument)
        var unit = 1
        if let last = text.last, let factor = units[last] {
            unit = factor
            text = text.dropLast()
        }
        guard let value = Int(text), value > 0, value <= 7 * 24 * 3600 / unit else { return nil }
        seconds = value * unit
    }
}
