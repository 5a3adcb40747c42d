import Foundation
import LatchkeySupport

/// A server's demand for a nonce in DPoP proofs (RFC 9449 §8): a `use_dpop_nonce` error with
/// the nonce to use in the `DPoP-Nonce` header.
package enum DPoPNonce {
    /// The nonce `response` asks the next proof to carry; `nil` unless it is a `use_dpop_nonce`
    /// error with a usable `DPoP-Nonce` (RFC 9449 §8.1: 1*NQCHAR, and short).
    static func requested(by response: HTTPResponse) -> String? {
        guard (400...401).contains(response.status), OAuthErrorResponse(body: response.body)?.error == "use_dpop_nonce" else { return nil }
        return offered(by: response)
    }

    /// The usable `DPoP-Nonce` of any answer (RFC 9449 §8.2: a server may give the next nonce
    /// with a success too), to remember for the next proof to this server.
    static func offered(by response: HTTPResponse) -> String? {
        guard let nonce = response.headers.first(where: { $0.0.lowercased() == "dpop-nonce" })?.1, isUsable(nonce) else { return nil }
        return nonce
    }

    /// Whether `nonce` may go into a proof: 1*NQCHAR (RFC 9449 §8.1), at most 512 characters.
    package static func isUsable(_ nonce: String) -> Bool {
        !nonce.isEmpty && nonce.count <= 512
            && nonce.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" })
    }
}
