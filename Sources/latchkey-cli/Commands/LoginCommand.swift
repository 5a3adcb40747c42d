import ArgumentParser
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyEssentials
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeySecondFactor
import LatchkeyVault

struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to a provider through the system browser (or by pasting, or with a device code).")

    @Argument(
        help: "The provider's name (its file name in providers.d without .toml), or PROVIDER:ACCOUNT to sign in again as that account.",
        completion: Completions.providers)
    var provider: String
    @Flag(help: "Paste the final redirect URL instead of listening on the loopback interface (for SSH sessions).") var paste = false
    @Flag(help: "Use the device authorization grant (RFC 8628): enter a code on any device.") var device = false
    @Option(help: "Seconds to wait for the browser.") var timeout: Int = 300
    @Option(help: "Firebase providers: after signing in, enroll this phone (E.164, such as +15555550100) as a second factor.")
    var enrollPhone: String?
    @Option(help: "The label of the phone given with --enroll-phone.") var phoneName: String?
    @Option(
        help:
            "Also ask for this API (RFC 8707 resource indicator) at this sign-in, after the provider file's resources, so that token --resource can name it (repeatable)."
    )
    var resource: [String] = []
    @Option(
        help:
            "Also ask for this scope at this sign-in, after the provider file's scopes (repeatable): what a server asked for and you accept."
    )
    var scope: [String] = []

    @OptionGroup var stepUp: StepUpOptions
    @OptionGroup var options: KeystoreOptions

    func validate() throws {
        if paste && device { throw ValidationError("--paste and --device cannot be combined") }
        if timeout <= 0 { throw ValidationError("--timeout must be positive") }
        for resource in resource {
            if let problem = ResourceIndicator.problem(resource) { throw ValidationError("--resource: \(problem)") }
        }
        if let bad = scope.first(where: { !ScopeToken.isValid($0) }) {
            throw ValidationError(
                "--scope takes one scope of visible characters without spaces or quotes, not \"\(TerminalText.sanitized(bad, maxLength: 80))\""
            )
        }
    }

    func run() async throws {
        try await Failure.reporting {
            let context = options.context()
            let selector = AccountSelector(parsing: self.provider)
            let named = try context.catalog.provider(named: selector.provider)
            guard var provider = resource.isEmpty ? named : named.naming(resources: resource) else {
                throw ValidationError("--resource is only for kind = \"oidc\" and \"oauth2\" providers")
            }
            if !scope.isEmpty {
                if case .firebase = provider.kind { throw ValidationError("--scope is only for kind = \"oidc\" and \"oauth2\" providers") }
                provider.askFor(scopes: provider.scopes + scope.filter { !provider.scopes.contains($0) })
            }
            if enrollPhone != nil && !provider.enrollsPhones {
                throw ValidationError("--enroll-phone is only for kind = \"firebase\" providers")
            }
            if (paste || device) && !provider.hasBrowserSignIn {
                throw ValidationError("--paste and --device apply only to a firebase provider whose first_factor is another provider")
            }
            let interaction = CommandLineInteraction()
            var (record, outcome) = try await context.service.signIn(
                provider: provider, mode: paste ? .paste : device ? .device : nil, account: selector.account.map { _ in selector },
                interaction: interaction, stepUp: stepUp.stepUp, timeout: .seconds(timeout))
            let verb = outcome == .added ? "Signed in" : "Signed in again"
            let factor = record.secondFactor.map { " (second factor: \($0))" } ?? ""
            Output.info("\(verb) to \(TerminalText.sanitized(provider.displayName)) as \(TerminalText.sanitized(record.label))\(factor).")
            guard let enrollPhone else { return }
            record = try await context.service.enrollPhone(
                AccountSelector(provider: provider.name, account: record.subject), phoneNumber: enrollPhone, displayName: phoneName,
                interaction: interaction)
            Output.info(
                "Enrolled \(PhoneNumberMask.maskedIfFull(enrollPhone)) as a second factor of \(TerminalText.sanitized(record.label)).")
        }
    }
}
