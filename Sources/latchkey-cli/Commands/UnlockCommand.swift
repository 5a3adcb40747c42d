import ArgumentParser
import Foundation
import LatchkeyEssentials
import LatchkeyVault
import LatchkeySupport
import LatchkeyKeystore
import LatchkeyProviders
import LatchkeyBroker

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
            if let openBao = keystore as? OpenBaoKeystore {
                guard let copies = openBao.launcherCopies else { throw Self.refused(Self.openBaoNotChosen) }
                let until = try await copies.unlock(for: TimeInterval(duration.seconds)) { _ = try await openBao.records() }
                Output.info(
                    "The openbao keystore's tokens are copied into the kernel keyring for `latchkey token` until \(until.formatted(date: .omitted, time: .standard)) (no passphrase: OpenBao's token reads them); `latchkey lock` drops the copies now."
                )
                return
            }
            guard let vault = keystore as? VaultKeystore, vault.keyCache != nil else {
                throw Self.refused(
                    "only the vault keystore is unlocked with a passphrase; the Secret Service unlocks with your desktop session")
            }
            let until = try await vault.unlock(for: TimeInterval(duration.seconds))
            Output.info("The vault is unlocked until \(until.formatted(date: .omitted, time: .standard)); `latchkey lock` locks it now.")
        }
    }

    /// The launcher answers only from config.toml's keystore, so only that one's tokens are copied.
    static let openBaoNotChosen =
        "the openbao keystore's tokens are copied for the launcher only when config.toml chooses it (keystore = \"openbao\"), not with --keystore"

    /// A request this keystore cannot do, said as every failure is and exiting as a usage error
    /// (a `ValidationError` thrown inside `Failure.reporting` would exit 1 as "unexpected").
    static func refused(_ message: String) -> ExitCode {
        Output.error(message)
        return ExitCode(Failure.usage)
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
            if let openBao = context.keystore as? OpenBaoKeystore {
                guard let copies = openBao.launcherCopies else { throw UnlockCommand.refused(UnlockCommand.openBaoNotChosen) }
                Output.info(
                    copies.lock()
                        ? "The copies of the openbao keystore's tokens are dropped from the kernel keyring."
                        : "The openbao keystore's tokens were not copied (`latchkey unlock` copies them).")
                return
            }
            guard let vault = context.keystore as? VaultKeystore, vault.keyCache != nil else {
                throw UnlockCommand.refused("only the vault keystore is locked here; lock the Secret Service from your desktop")
            }
            Output.info(vault.lock() ? "The vault is locked." : "The vault was not unlocked.")
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
