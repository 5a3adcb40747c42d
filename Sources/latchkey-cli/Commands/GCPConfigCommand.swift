import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyClouds
import LatchkeyProviders
import LatchkeyVault

/// `latchkey gcp-config PROVIDER[:ACCOUNT] --audience AUD`: the Google Cloud credential
/// configuration whose executable source runs `gcp-credential`, printed or written to a new file.
struct GCPConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gcp-config",
        abstract:
            "Print a Google Cloud credential configuration that gets its ID token from latchkey gcp-credential, or write it with --output.",
        discussion:
            "Point GOOGLE_APPLICATION_CREDENTIALS at the file, or run gcloud auth login --cred-file FILE; Google's libraries run latchkey only with GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 set."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @Option(help: "The workload or workforce identity pool provider's full name, //iam.googleapis.com/...") var audience: String
    @Option(
        name: .customLong("service-account-impersonation-url"),
        help: "IAM Credentials' generateAccessToken URL of the service account to impersonate.")
    var impersonationURL: String?
    @Option(name: .customLong("token-url"), help: "The token exchange endpoint (default: https://sts.googleapis.com/v1/token).")
    var tokenURL: String?
    @Option(help: "How Google's libraries start Latchkey: a name found on PATH now, or an absolute path.") var command = "latchkey"
    @Option(help: "Write the configuration to this new file (owner-only) instead of printing it.") var output: String?

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let selector = AccountSelector(parsing: selector)
            _ = try options.context().service.catalog.provider(named: selector.provider)
            let configuration = try GoogleExternalAccount.configuration(
                audience: audience, command: [try Self.absolute(command), "gcp-credential", selector.description],
                tokenURL: tokenURL, impersonationURL: impersonationURL)
            guard let output else { return Output.result(configuration) }
            try GoogleExternalAccount.create(output, text: configuration + "\n")
            Output.info(
                "latchkey: wrote \(output); try: GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 GOOGLE_APPLICATION_CREDENTIALS=\(output) gcloud ..."
            )
        }
    }

    /// `command` as Google's libraries need it, an absolute path (they do not search PATH alike).
    static func absolute(_ command: String) throws(GoogleCredentialError) -> String {
        if command.hasPrefix("/") { return command }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(command)"
            if !command.contains("/"), FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw .commandNotFound(command)
    }
}
