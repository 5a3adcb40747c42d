import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyCredentialHelpers
import LatchkeyVault

/// `latchkey kubectl-credential SELECTOR`: a client-go credential plugin, run by kubectl from a
/// kubeconfig user's `exec` (`latchkey kubeconfig` writes one). stdout carries the
/// `ExecCredential` answer and nothing else; whatever is for the person goes to stderr, which
/// kubectl shows.
struct KubectlCredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubectl-credential",
        abstract: "A kubectl credential plugin: answers KUBERNETES_EXEC_INFO with an ExecCredential holding a valid access token.",
        discussion:
            "kubectl runs it from a kubeconfig user's exec (see latchkey kubeconfig). When the account needs a sign-in and kubectl says the session is interactive, it signs in on the terminal; otherwise it fails with one line that kubectl shows."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let request = try ExecCredentialRequest(
                parsing: ProcessInfo.processInfo.environment[ExecCredentialRequest.environmentVariable])
            let release = try await options.broker(person: request.interactive ? CommandLineInteraction.atTerminal() : nil).token(
                TokenRequest(selector: selector, minimumLifetime: minimumLifetime.seconds, workingDirectory: workingDirectory))
            let token = try release.requiredAccessToken()
            let expiresAt = release.expiresAt.map { Date(timeIntervalSince1970: TimeInterval($0)) }
            try Output.json(ExecCredential(apiVersion: request.apiVersion, token: token, expiresAt: expiresAt))
        }
    }
}
