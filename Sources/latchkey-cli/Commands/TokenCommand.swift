import ArgumentParser
import Foundation
import LatchkeyBrokerWire
import LatchkeyVault
import LatchkeyOAuth
import LatchkeyBroker
import LatchkeyAccounts

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
            let context = options.context()
            // The agent knows nothing of step-up.
            if stepUp.stepUp.isEmpty {
                let request = ThroughAgent.tokenRequest(
                    selector, minimumLifetime: minimumLifetime.seconds, tokens: idToken ? .id : .access, narrowing: narrowing.narrowing)
                if let answer = try ThroughAgent.ask(request, context: context), let token = idToken ? answer.idToken : answer.accessToken {
                    return Output.token(token)
                }
            }
            let service = context.service
            // A step-up asked for by name is a person's: without a terminal, the browser still serves.
            let terminal = CommandLineInteraction.atTerminal() ?? (stepUp.stepUp.isEmpty ? nil : .browserOnly())
            let record = try await service.validRecord(
                for: AccountSelector(parsing: selector), minimumLifetime: minimumLifetime.interval, signingInWith: terminal,
                stepUp: stepUp.stepUp)
            if let narrowing = narrowing.narrowing {
                Output.token(
                    try await service.accessToken(
                        of: record, narrowing: narrowing, minimumLifetime: minimumLifetime.interval, signingInWith: terminal
                    ).token)
            } else {
                Output.token(try service.token(of: record, idToken: idToken))
            }
        }
    }
}
