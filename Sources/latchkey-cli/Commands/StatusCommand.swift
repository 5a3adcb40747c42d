import ArgumentParser
import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyBrokerWire
import LatchkeyVault
import LatchkeyAccounts
import LatchkeyProviders
import LatchkeyBroker
import LatchkeyKeystore

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show every account: who, where, and when its token expires.")

    @Flag(help: "Print JSON on stdout.") var json = false

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let context = options.context()
            let asked = AgentRequest(.status, workingDirectory: FileManager.default.currentDirectoryPath, client: .current())
            if let answer = try ThroughAgent.ask(asked, context: context) {
                if json { return Output.result(answer.report ?? "") }
                let lines = answer.lines ?? []
                if lines.isEmpty { Output.info("The agent offers no account here.") }
                return lines.forEach(Output.result)
            }
            let records = try await context.keystore.records()
            let report = StatusReport(
                records: records, keystore: context.keystore.backendName, now: Date(),
                here: context.service.here.map { ($0.accounts, $0.path) })
            if json {
                try Output.json(report)
                return
            }
            if let here = context.service.here { warnAboutMappings(here, records: records, catalog: context.catalog) }
            if records.isEmpty { Output.info("No accounts signed in. Sign in with `latchkey login PROVIDER` (see `latchkey providers`).") }
            report.listing(providers: context.catalog.providers).forEach(Output.result)
        }
    }

    /// config.toml lines mapping a directory to a provider that is not configured, or to an
    /// account not signed in: said, with the line, and otherwise ignored.
    private func warnAboutMappings(_ here: WorkingDirectory, records: [AccountRecord], catalog: ProviderCatalog) {
        for mapping in here.accounts.mappings {
            let place = here.configFile + (mapping.line.map { ":\($0)" } ?? "")
            if let problem = mapping.pathProblem {
                Output.error("warning: \(place): [directories.\"\(TerminalText.sanitized(mapping.written, maxLength: 200))\"] \(problem)")
            }
            for (provider, account) in mapping.accounts.sorted(by: { $0.key < $1.key }) {
                if !catalog.providers.contains(where: { $0.name == provider }) {
                    Output.error(
                        "warning: \(place): [directories.\"\(mapping.written)\"] names \(provider), which is not a configured provider")
                } else if (try? AccountSelector(provider: provider, account: account).index(in: records)) == nil {
                    Output.error(
                        "warning: \(place): [directories.\"\(mapping.written)\"] maps \(provider) to \(account), who is not signed in there"
                    )
                }
            }
        }
    }
}
