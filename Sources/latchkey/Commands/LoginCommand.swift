import ArgumentParser
import LatchkeyCore

struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to a provider through the system browser (or by pasting, or with a device code).")

    @Argument(help: "The provider's name (its file name in providers.d without .toml).") var provider: String
    @Flag(help: "Paste the final redirect URL instead of listening on the loopback interface (for SSH sessions).") var paste = false
    @Flag(help: "Use the device authorization grant (RFC 8628): enter a code on any device.") var device = false
    @Option(help: "Seconds to wait for the browser.") var timeout: Int = 300

    func validate() throws {
        if paste && device { throw ValidationError("--paste and --device cannot be combined") }
        if timeout <= 0 { throw ValidationError("--timeout must be positive") }
        if provider.contains(":") {
            throw ValidationError("give only the provider's name; login adds or updates the account you sign in as")
        }
    }

    func run() async throws {
        try await Failure.reporting {
            let context = CommandContext()
            let provider = try context.catalog.provider(named: provider)
            let mode: Provider.RedirectMode = paste ? .paste : device ? .device : provider.redirectMode
            let (record, outcome) = try await context.service.signIn(
                provider: provider, mode: mode, interaction: CommandLineInteraction(),
                browser: BrowserLauncher(environment: context.environment), timeout: .seconds(timeout))
            let verb = outcome == .added ? "Signed in" : "Signed in again"
            Output.info("\(verb) to \(TerminalText.sanitized(provider.displayName)) as \(TerminalText.sanitized(record.label)).")
        }
    }
}
