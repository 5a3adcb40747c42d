import TOMLKit

/// The provider file keys of `ProtocolChoices`: PAR, DPoP and resources.
extension ProviderFileParser {
    static let protocolChoiceKeys: Set<String> = ["par", "dpop", "resources", "grant", "client_secret_file"]
}

extension ProviderFileParser.Context {
    /// Reads the `ProtocolChoices` keys.
    mutating func protocolChoices(_ table: TOMLTable) -> ProtocolChoices {
        var choices = ProtocolChoices()
        choices.pushedAuthorization = choice(table, "par", ProtocolChoices.Use.self, required: false) ?? .auto
        choices.proofOfPossession = choice(table, "dpop", ProtocolChoices.Use.self, required: false) ?? .auto
        for resource in stringArray(table, "resources") ?? [] {
            if let problem = ResourceIndicator.problem(resource) {
                fail("resources", problem)
            } else {
                choices.resources.append(resource)
            }
        }
        choices.grant = choice(table, "grant", ProtocolChoices.Grant.self, required: false) ?? .authorizationCode
        if let path = string(table, "client_secret_file", required: false) {
            if path.hasPrefix("/") { choices.clientSecretFile = path } else { fail("client_secret_file", "must be an absolute path") }
        }
        if choices.grant == .clientCredentials && choices.clientSecretFile == nil && !hasError(for: "client_secret_file") {
            fail("grant", "\"client_credentials\" needs client_secret_file, a 0600 file holding the client secret")
        }
        return choices
    }
}
