import TOMLKit

/// The provider file keys of `ProtocolChoices`: PAR, DPoP and resources.
extension ProviderFileParser {
    static let protocolChoiceKeys: Set<String> = ["par", "dpop", "resources"]
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
        return choices
    }
}
