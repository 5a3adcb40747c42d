import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyClouds
import LatchkeyProviders
import LatchkeyVault

/// `latchkey aws-config PROVIDER[:ACCOUNT] --profile NAME`: the AWS config profile whose
/// `credential_process` runs `aws-credential` with the same options, printed or added to the
/// AWS config file.
struct AWSConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aws-config",
        abstract: "Print an AWS config profile that gets its credentials from latchkey aws-credential, or add it with --write.",
        discussion:
            "--write adds it to AWS_CONFIG_FILE or ~/.aws/config, keeping the file as it was in FILE.latchkey-backup, and refuses to replace a profile of the same name."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @Option(help: "The profile's name, as aws --profile NAME takes it.") var profile: String
    @OptionGroup var role: AWSRoleArguments
    @Option(help: "How the AWS CLI starts Latchkey: a name it finds on its PATH, or an absolute path.") var command = "latchkey"
    @Flag(help: "Add the profile to the AWS config file instead of printing it.") var write = false

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let catalog = options.context().service.catalog
            let selector = AccountSelector(parsing: selector)
            let settings = try catalog.provider(named: selector.provider).aws
            let profile = try AWSProfile(
                name: profile, command: [command, "aws-credential", selector.description] + role.arguments,
                region: settings.region, checking: role.options, settings: settings, provider: selector.provider)
            guard write else { return Output.result(profile.stanza) }
            let environment = ProcessInfo.processInfo.environment
            let file = try AWSProfile.configFile(environment: environment)
            let backup = try profile.add(to: file)
            Output.info(
                "latchkey: added [profile \(profile.name)] to \(file)" + (backup.map { " (it was kept as \($0))" } ?? "")
                    + "; try: aws sts get-caller-identity --profile \(profile.name)")
        }
    }
}
