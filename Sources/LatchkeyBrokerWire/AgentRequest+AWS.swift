public import LatchkeyBrokerWire

extension AgentRequest {
    /// `aws-credential`'s request to the agent, one spelling for the full command and the
    /// launcher: `options` as `LauncherRequest.awsCredential` holds them (`--role-arn`,
    /// `--duration`, `--session-name`, `--sts-endpoint`, each `nil` when not given), and the
    /// variables that choose the STS endpoint, which an agent heeds from a client on its own
    /// machine only.
    public static func awsCredential(
        selector: String, options: [String?], minimumLifetime: Int, environment: (String) -> String?, workingDirectory: String?
    ) -> AgentRequest {
        var variables: [String: String] = [:]
        for name in AWSRole.environmentKeys { variables[name] = environment(name) }
        let option = { (index: Int) in index < options.count ? options[index] : nil }
        return AgentRequest(
            .awsCredential, selector: selector, minimumLifetime: minimumLifetime, workingDirectory: workingDirectory,
            aws: AWSRole(
                roleARN: option(0), duration: option(1).flatMap { Int($0) }, sessionName: option(2), stsEndpoint: option(3),
                environment: variables),
            client: .current())
    }
}
