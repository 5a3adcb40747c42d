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
    @Option(help: "A token for this API only (RFC 8707 resource indicator), got with the account's refresh token.")
    var resource: String?
    @Option(help: "A token with only these of the account's scopes, space-separated, such as \"read:user repo\".")
    var scope: String?
    @OptionGroup var stepUp: StepUpOptions
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    /// What `--resource` and `--scope` ask for, `nil` for the account's own token.
    var narrowing: TokenNarrowing? {
        guard resource != nil || scope != nil else { return nil }
        return TokenNarrowing(resource: resource, scopes: scope.map { $0.split(separator: " ").map(String.init) } ?? [])
    }

    func validate() throws {
        if let resource, let problem = ResourceIndicator.problem(resource) { throw ValidationError("--resource: \(problem)") }
        if let scope, scope.split(separator: " ").isEmpty { throw ValidationError("--scope must name at least one scope") }
        if idToken && narrowing != nil { throw ValidationError("--id-token cannot be combined with --resource or --scope") }
        if !stepUp.stepUp.isEmpty && narrowing != nil {
            throw ValidationError("--acr and --max-age cannot be combined with --resource or --scope")
        }
    }

    func run() async throws {
        try await Failure.reporting {
            let service = options.context().service
            if let narrowing {
                Output.token(
                    try await service.narrowedToken(
                        for: AccountSelector(parsing: selector), narrowing, minimumLifetime: minimumLifetime.interval))
                return
            }
            let record = try await service.validRecord(
                for: AccountSelector(parsing: selector), minimumLifetime: minimumLifetime.interval,
                signingInWith: CommandLineInteraction.atTerminal(), stepUp: stepUp.stepUp)
            Output.token(try service.token(of: record, idToken: idToken))
        }
    }
}
