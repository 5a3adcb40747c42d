import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyKeystore
import LatchkeyProviders
import LatchkeyVault

/// `latchkey openbao-token PROVIDER[:ACCOUNT] --role ROLE`: logs in to OpenBao's JWT auth method
/// with the account's ID token and prints the OpenBao client token on stdout, and nothing else,
/// so `BAO_TOKEN=$(latchkey openbao-token …)` reaches a team's OpenBao as the person signed in.
struct OpenBaoTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openbao-token",
        abstract: "Log in to OpenBao's JWT auth method with the account's ID token and print the OpenBao token.",
        discussion:
            "The address is --address, else the provider file's openbao_address, else BAO_ADDR, else VAULT_ADDR. OpenBao's refusal is printed on stderr as it gave it, with the exit status latchkey token would give."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @Option(help: "The JWT auth method's role to log in as.") var role: String
    @Option(help: "OpenBao's address, such as https://openbao.example:8200 (default: openbao_address, else BAO_ADDR, else VAULT_ADDR).")
    var address: String?
    @Option(name: .customLong("auth-mount"), help: "Where the JWT auth method is mounted.") var authMount = "jwt"
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            // Everything the person typed is checked before the account is touched.
            try OpenBaoNames.checkRole(role)
            try OpenBaoNames.checkMount(authMount, option: "--auth-mount")
            let context = options.context()
            let provider = AccountSelector(parsing: selector).provider
            // No provider file is needed where a forwarded agent serves the account.
            let configured = address == nil ? (try? context.service.catalog.provider(named: provider))?.openBaoAddress : nil
            let address = try OpenBaoClient.address(
                option: address, configured: configured, environment: context.environment, provider: provider)
            let idToken: Secret
            do {
                idToken = try await context.broker(person: CommandLineInteraction.atTerminal(), say: { Output.error($0) }).token(
                    TokenRequest(
                        selector: selector, minimumLifetime: minimumLifetime.seconds, tokens: .id, workingDirectory: workingDirectory)
                ).requiredIDToken()
            } catch SignInError.noIDToken(let account) {
                throw OpenBaoError.noIDToken(account: account, provider: provider)
            }
            Output.token(try await context.service.openBao(at: [address]).login(jwt: idToken, role: role, mount: authMount))
        }
    }
}
