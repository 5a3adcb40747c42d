import ArgumentParser
import Foundation
import LatchkeyCore
import LatchkeyVault

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token (refreshing it first when needed) and nothing else.")

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @Flag(name: .customLong("id-token"), help: "Print the ID token instead of the access token.") var idToken = false
    @Option(name: .customLong("min-ttl"), help: "Refresh first when the token expires within this many seconds.") var minimumLifetime: Int =
        60

    @OptionGroup var options: KeystoreOptions

    func validate() throws {
        if minimumLifetime < 0 { throw ValidationError("--min-ttl must not be negative") }
    }

    func run() async throws {
        try await Failure.reporting {
            let token = try await options.context().service.validToken(
                for: AccountSelector(parsing: selector), minimumLifetime: TimeInterval(minimumLifetime), idToken: idToken)
            Output.result(token.exposedValue)
        }
    }
}
