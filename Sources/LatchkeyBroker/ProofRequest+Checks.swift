public import Foundation
public import LatchkeyBrokerWire
import LatchkeyOAuth
public import LatchkeyProviders
import LatchkeySupport

/// What the broker checks of a proof request before any account is chosen, and which URL a
/// forwarded host may have proofs for.
extension ProofRequest {
    /// The method and URL to sign for, once the request is one a proof can be made for: `htm`
    /// an HTTP method of capital letters, `htu` an http(s) URL with a host of at most
    /// `ResourceIndicator.maximumLength` bytes, `nonce` one a server may send (RFC 9449 §8.1),
    /// `ath` a base64url SHA-256 (43 characters).
    public func checked() throws(BrokerError) -> (method: String, url: URL) {
        guard (1...16).contains(method.utf8.count), method.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
        else { throw .malformedRequest(reason: "htm must be an HTTP method in capital letters") }
        guard url.utf8.count <= ResourceIndicator.maximumLength, let parsed = URL(string: url),
            ["http", "https"].contains(parsed.scheme?.lowercased()), ProtectedResourceMetadata.canonical(parsed) != nil
        else { throw .malformedRequest(reason: "htu must be an http or https URL with a host, of at most 2 KiB") }
        if let nonce, !DPoPNonce.isUsable(nonce) { throw .malformedRequest(reason: "nonce must be 1 to 512 of RFC 9449's NQCHAR") }
        guard tokenHash.utf8.count == 43, Base64URL.decode(tokenHash)?.count == 32 else {
            throw .malformedRequest(reason: "ath must be the base64url SHA-256 of the access token")
        }
        return (method, parsed)
    }

    /// Whether `url` is the MCP server `provider`'s file names (`mcp_url`), compared as the
    /// server's canonical URI without query or fragment: the one URL the account's token is
    /// sent to by `mcp proxy`, and so the only one a forwarded host gets proofs for.
    public static func isNamed(_ url: URL, by provider: Provider?) -> Bool {
        guard let server = provider?.protocolChoices?.mcpURL else { return false }
        func target(_ url: URL) -> String? { URL(string: DPoPKey.targetURI(url)).flatMap(ProtectedResourceMetadata.canonical) }
        return target(url) != nil && target(url) == target(server)
    }
}
