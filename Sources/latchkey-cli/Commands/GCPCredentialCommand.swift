import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyClouds
import LatchkeyVault

/// `latchkey gcp-credential PROVIDER[:ACCOUNT]`: the executable of a Google Cloud
/// `external_account` credential configuration. stdout carries Google's executable response and
/// nothing else, the error form included, since the libraries read only that.
struct GCPCredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gcp-credential",
        abstract: "A Google Cloud executable-sourced credential: the account's ID token, in Google's executable response.",
        discussion:
            "Google's libraries and gcloud run it from the credential configuration latchkey gcp-config writes, and only with GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 set. A failure is the response's error form, with the exit status latchkey token would give."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        do {
            if let type = environment["GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE"], !type.isEmpty, type != GoogleExternalAccount.idTokenType {
                throw GoogleCredentialError.unsupportedTokenType(type)
            }
            // The libraries say "0" when no person is there to sign in; run by hand, a terminal may be.
            let interaction = environment["GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE"] == "0" ? nil : CommandLineInteraction.atTerminal()
            let release = try await options.broker(person: interaction).token(
                TokenRequest(selector: selector, minimumLifetime: minimumLifetime.seconds, tokens: .id, workingDirectory: workingDirectory))
            let response = try GoogleExecutableResponse(idToken: try release.requiredIDToken())
            if let file = environment["GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE"], !file.isEmpty {
                try GoogleExternalAccount.writeOutputFile(file, response)
            }
            try Output.json(response)
        } catch {
            let (status, message) = Failure.outcome(of: error)
            try Output.json(GoogleExecutableResponse(failure: String(status), message: message))
            throw ExitCode(status)
        }
    }
}
