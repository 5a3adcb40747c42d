import TOMLKit

/// The provider file keys of `ProtocolChoices`: PAR and DPoP.
extension ProviderFileParser {
    static let protocolChoiceKeys: Set<String> = ["par", "dpop"]
}

extension ProviderFileParser.Context {
    /// Reads the `ProtocolChoices` keys.
    mutating func protocolChoices(_ table: TOMLTable) -> ProtocolChoices {
        var choices = ProtocolChoices()
        choices.pushedAuthorization = choice(table, "par", ProtocolChoices.Use.self, required: false) ?? .auto
        choices.proofOfPossession = choice(table, "dpop", ProtocolChoices.Use.self, required: false) ?? .auto
        return choices
    }
}
