import Foundation
import TOMLKit

/// The provider file key of `latchkey openbao-token`, read for every kind (each has an ID token).
extension ProviderFileParser {
    static let openBaoKeys: Set<String> = ["openbao_address"]
}

extension ProviderFileParser.Context {
    /// `openbao_address`, checked as `--address` is: the endpoint rules, and no query.
    mutating func openBaoAddress(_ table: TOMLTable) -> URL? {
        guard let raw = string(table, "openbao_address", required: false) else { return nil }
        do {
            return try OpenBaoNames.address(raw)
        } catch {
            fail("openbao_address", error.description)
            return nil
        }
    }
}
