import ArgumentParser
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyOAuth

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token (refreshing it first when needed) and nothing else.")

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @Flag(name: .customLong("id-token"), help: "Print the ID token instead of the access token.") var idToken = false
    @OptionGroup var narrowing: NarrowingOptions
    @OptionGroup var stepUp: StepUpOptions
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func validate() throws {
        if idToken && narrowing.narrowing != nil { throw ValidationError("--id-token cannot be combined with --resource or --scope") }
        if !stepUp.stepUp.isEmpty && narrowing.narrowing != nil {
            throw ValidationError("--acr and --max-age cannot be combined with --resource or --scope")
        }
    }

    func run() async throws {
        try await Failure.reporting {
            // A step-up asked for by name is a person's: without a terminal, the browser still serves.
            let person = CommandLineInteraction.atTerminal() ?? (stepUp.stepUp.isEmpty ? nil : .browserOnly())
            let release = try await options.broker(person: person).token(
                TokenRequest(
                    selector: selector, minimumLifetime: minimumLifetime.seconds, tokens: idToken ? .id : .access,
                    narrowing: narrowing.narrowing, acrValues: stepUp.acrValues.isEmpty ? nil : stepUp.acrValues, maxAge: stepUp.maxAge,
                    workingDirectory: workingDirectory))
            Output.token(idToken ? try release.requiredIDToken() : try release.requiredAccessToken())
        }
    }
}
