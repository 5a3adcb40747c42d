import Foundation
import LatchkeyEssentials
import TOMLKit

/// The provider file keys of `AWSSettings`, read for every kind (a firebase account has an ID token too).
extension ProviderFileParser {
    static let awsKeys: Set<String> = ["aws_role_arn", "aws_roles", "aws_region", "aws_sts_endpoint", "aws_web_identity_token"]
}

extension ProviderFileParser.Context {
    mutating func awsSettings(_ table: TOMLTable) -> AWSSettings {
        var settings = AWSSettings()
        if let arn = string(table, "aws_role_arn", required: false) {
            if let problem = AWSNames.roleARNProblem(arn) { fail("aws_role_arn", problem) } else { settings.roleARN = arn }
        }
        for arn in stringArray(table, "aws_roles") ?? [] {
            if let problem = AWSNames.roleARNProblem(arn) {
                fail("aws_roles", "\"\(TerminalText.sanitized(arn, maxLength: 120))\" \(problem)")
            } else {
                settings.roles.append(arn)
            }
        }
        if let region = string(table, "aws_region", required: false) {
            if AWSNames.isRegion(region) {
                settings.region = region
            } else {
                fail("aws_region", "must be an AWS region name such as eu-west-1")
            }
        }
        settings.stsEndpoint = url(table, "aws_sts_endpoint")
        settings.webIdentityToken = choice(table, "aws_web_identity_token", AWSSettings.WebIdentityToken.self, required: false) ?? .idToken
        return settings
    }
}
