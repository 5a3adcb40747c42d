import Foundation
import TOMLKit

/// The provider file keys of the clouds that take an account's identity token, and whether a
/// forwarded host may hold that token: read for every kind (each has an ID token).
extension ProviderFileParser {
    static let identityKeys: Set<String> = ["openbao_address", "gcp_audience", "forward_id_token"]
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

    /// `gcp_audience`: a workload or workforce identity pool provider's full name, as
    /// `gcp-config --audience` takes it.
    mutating func googleAudience(_ table: TOMLTable) -> String? {
        guard let audience = string(table, "gcp_audience", required: false) else { return nil }
        guard audience.hasPrefix("//iam.googleapis.com/"), !audience.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            fail("gcp_audience", "must be an identity pool provider's full name, //iam.googleapis.com/…")
            return nil
        }
        return audience
    }

    /// `forward_id_token`: a boolean, false when absent.
    mutating func forwardsIdentityToken(_ table: TOMLTable) -> Bool {
        guard let value = table["forward_id_token"] else { return false }
        guard let flag = value.bool else {
            fail("forward_id_token", "must be true or false")
            return false
        }
        return flag
    }
}
