import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyEssentials
import LatchkeyVault

/// `latchkey refresh`: the screen's `r` for scripts, whatever the token's expiry.
struct RefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh", abstract: "Refresh an account's tokens now, even when they are still valid.")

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT.", completion: Completions.providers) var selector: String

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let record = try await options.context().service.refresh(AccountSelector(parsing: selector))
            let expiry = record.expiresAt.map { " (valid for \(max(0, Int(wholeSeconds: $0.timeIntervalSinceNow))) s)" } ?? ""
            Output.info("Refreshed \(record.provider):\(TerminalText.sanitized(record.label))\(expiry).")
        }
    }
}
