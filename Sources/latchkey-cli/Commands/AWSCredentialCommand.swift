import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyClouds
import LatchkeyEssentials
import LatchkeyProviders
import LatchkeyVault

/// The options of `aws-credential` that `aws-config` carries into the profile it writes.
struct AWSRoleArguments: ParsableArguments {
    @Option(name: .customLong("role-arn"), help: "The IAM role to assume (default: aws_role_arn of the provider file).")
    var roleARN: String?
    @Option(help: "How long the credentials last, in seconds (900 to 43200; default: the role's own, one hour unless set).")
    var duration: Int?
    @Option(name: .customLong("session-name"), help: "The role session name (default: the account's name, sanitised).")
    var sessionName: String?
    @Option(
        name: .customLong("sts-endpoint"),
        help: "STS's URL (default: aws_sts_endpoint, else AWS_ENDPOINT_URL_STS, else https://sts.REGION.amazonaws.com).")
    var stsEndpoint: String?

    var options: AWSRoleOptions {
        AWSRoleOptions(roleARN: roleARN, duration: duration, sessionName: sessionName, stsEndpoint: stsEndpoint)
    }

    func validate() throws {
        if let duration, !AWSNames.durations.contains(duration) { throw ValidationError("--duration must be from 900 to 43200 seconds") }
    }

    /// The options as they stand on `aws-credential`'s command line.
    var arguments: [String] {
        [
            ("--role-arn", roleARN), ("--duration", duration.map(String.init)), ("--session-name", sessionName),
            ("--sts-endpoint", stsEndpoint),
        ]
        .flatMap { name, value in value.map { [name, $0] } ?? [] }
    }
}

/// `latchkey aws-credential PROVIDER[:ACCOUNT]`: an AWS `credential_process`. stdout carries
/// the documented JSON and nothing else; why there is none goes to stderr in one line.
struct AWSCredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aws-credential",
        abstract: "An AWS credential_process: AWS credentials for a role, from STS AssumeRoleWithWebIdentity with the account's ID token.",
        discussion:
            "Kept with the account until five minutes before they expire, so the AWS CLI asks STS once per credentials' life. Set it up with latchkey aws-config, or in ~/.aws/config: credential_process = latchkey aws-credential PROVIDER --role-arn ARN"
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @OptionGroup var role: AWSRoleArguments
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let environment = AWSRoleOptions.environment { ProcessInfo.processInfo.environment[$0] }
            let release = try await options.broker(person: CommandLineInteraction.atTerminal()).awsCredential(
                AWSCredentialRequest(
                    selector: selector, options: role.options, minimumLifetime: minimumLifetime.seconds, environment: environment,
                    workingDirectory: workingDirectory))
            try Output.json(AWSProcessCredential(release))
        }
    }
}
