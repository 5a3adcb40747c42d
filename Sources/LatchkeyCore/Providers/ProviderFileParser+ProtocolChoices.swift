import TOMLKit

/// The provider file keys of `ProtocolChoices`.
extension ProviderFileParser {
    static let protocolChoiceKeys: Set<String> = ["par"]
}

extension ProviderFileParser.Context {
    /// Reads the `ProtocolChoices` keys.
    mutating func protocolChoices(_ table: TOMLTable) -> ProtocolChoices {
        var choices = ProtocolChoices()
        choices.pushedAuthorization = choice(table, "par", ProtocolChoices.Use.self, required: false) ?? .auto
        return choices
    }
}
