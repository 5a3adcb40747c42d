import ArgumentParser
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyEssentials
import LatchkeyVault

/// `latchkey default`: which account a bare provider name selects.
struct DefaultCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "default", abstract: "Make an account the one `PROVIDER` alone selects when the provider has several.")

    @Argument(help: "PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers) var selector: String

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let record = try await options.context().service.makeDefault(AccountSelector(parsing: selector))
            Output.info("\(record.provider) now means \(record.provider):\(TerminalText.sanitized(record.label)).")
        }
    }
}
