import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyKeystore
import LatchkeyProviders
import LatchkeySupport
import LatchkeyVault

/// `latchkey keystore`: what concerns the keystore as a whole.
struct KeystoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keystore", abstract: "Move accounts between keystores; list or clear the openbao keystore's leases.",
        subcommands: [KeystoreMigrateCommand.self, KeystoreLeasesCommand.self])
}

/// `latchkey keystore leases [--clear NAME]`: who holds the openbao keystore's leases and what
/// each keeps waiting, or one that no Latchkey waits for (expired, or a deadline beyond reach)
/// freed with check-and-set.
struct KeystoreLeasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leases",
        abstract:
            "List the leases held on the openbao keystore's path (holder, time left, what waits), or clear one that is expired or beyond reach."
    )

    @Option(help: "Free this lease (lease, or leases/HASH, as listed) unless it is held within its deadline.")
    var clear: String?

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let context = options.context()
            guard let keystore = context.keystore as? OpenBaoKeystore else {
                Output.error(
                    "leases are the openbao keystore's; the keystore in use is \(context.keystore.backendName) (config.toml's keystore, or --keystore openbao)"
                )
                throw ExitCode(Failure.usage)
            }
            if let clear {
                let lease = try await keystore.clearLease(clear)
                Output.result("cleared \(lease.name) (held by \(lease.owner), deadline \(lease.deadline))")
                return
            }
            let leases = try await keystore.leases()
            if leases.isEmpty { Output.result("no lease is held on \(keystore.settings.mount)/\(keystore.settings.path)") }
            for lease in leases { Output.result(lease.description) }
        }
    }
}

/// `latchkey keystore migrate --to KEYSTORE`: every account and registered client of the keystore
/// in use (config.toml's `keystore`, or `--keystore`) moved into another (`KeystoreMigration`).
struct KeystoreMigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract:
            "Move every account and registered client of the keystore in use into another, each verified there before it is removed here; run it again after an interruption."
    )

    @Option(
        help: "The keystore to move into: vault, secret-service or openbao (config.toml's [openbao]).",
        completion: .list(LatchkeyConfiguration.KeystoreBackend.allCases.map(\.rawValue)),
        transform: { text in
            guard let backend = LatchkeyConfiguration.KeystoreBackend(rawValue: text) else {
                throw ValidationError("--to must be vault, secret-service or openbao")
            }
            return backend
        })
    var to: LatchkeyConfiguration.KeystoreBackend

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let source = options.context()
            let configured = try source.configuration.get().keystore
            let from = options.keystore ?? configured
            guard from != to else {
                // A usage error, said as every failure is (a ValidationError here would exit 1).
                Output.error(
                    "the accounts are in \(to.rawValue) already: --to names the keystore to move them into (--keystore or config.toml's keystore names the one they are in)"
                )
                throw ExitCode(Failure.usage)
            }
            let target = Composition(backend: to)
            let steps = try await KeystoreMigration(from: source.keystore, to: target.keystore).run { step in
                switch step.item {
                case .account(let provider, let label): Output.result("\(provider):\(label): \(step.outcome.description)")
                case .client(let provider): Output.result("\(provider) registered client: \(step.outcome.description)")
                }
            }
            let (accounts, clients) = (steps.filter(\.item.isAccount), steps.filter { !$0.item.isAccount })
            let left = steps.count(where: { !$0.outcome.isDone })
            if steps.isEmpty {
                Output.result("\(from.rawValue) holds no account and no registered client: nothing to move.")
            } else {
                Output.result(
                    "\(accounts.count(where: \.outcome.isDone)) of \(accounts.count) accounts and \(clients.count(where: \.outcome.isDone)) of \(clients.count) registered clients are in \(to.rawValue) now; "
                        + (left == 0 ? "nothing is left in \(from.rawValue)." : "\(left) left in \(from.rawValue) (above).")
                )
            }
            guard left == 0 else { throw ExitCode(Failure.exitCode(for: .unavailable)) }
            if configured != to {
                let file = LatchkeyPaths(environment: source.environment).configFile
                let line = "keystore = \"\(to.rawValue)\""
                if let number = LatchkeyConfiguration.keystoreLine(inFileAt: file) {
                    Output.info("config.toml still chooses \(configured.rawValue): set `\(line)` on line \(number) of \(file).")
                } else {
                    Output.info("config.toml chooses \(configured.rawValue) (the default): add the line `\(line)` at the top of \(file).")
                }
            }
        }
    }
}
