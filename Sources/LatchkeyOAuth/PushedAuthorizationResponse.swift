import Foundation
import LatchkeySupport

/// The PAR endpoint's answer (RFC 9126 §2.2): the `request_uri` standing for the pushed request.
struct PushedAuthorizationResponse {
    /// `request_uri`
    var requestURI: String

    static let endpoint = "pushed authorization request endpoint"

    /// 201 (or 200) with a `request_uri`; an error body as the token endpoint's (§2.3), and a
    /// bare status (glewlwyd answers every refusal with 403 and no body) named as such.
    static func parse(_ response: HTTPResponse) throws(TokenEndpointError) -> PushedAuthorizationResponse {
        if let error = OAuthErrorResponse(body: response.body) { throw .oauth(endpoint: endpoint, error) }
        guard response.status == 201 || response.status == 200 else {
            throw .malformed(
                endpoint: endpoint,
                reason:
                    "HTTP \(response.status) without an OAuth error (the server refused the request without saying why; check client_id, redirect_uri and scopes)"
            )
        }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(response.body)) else {
            throw .malformed(endpoint: endpoint, reason: "the body is not a JSON object")
        }
        // It goes into the browser's URL, percent-encoded: any visible ASCII will do, within reason.
        guard let requestURI = wire.requestURI, !requestURI.isEmpty, requestURI.count <= 2048,
            requestURI.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
        else {
            throw .malformed(endpoint: endpoint, reason: "request_uri is missing or not a URI")
        }
        return PushedAuthorizationResponse(requestURI: requestURI)
    }

    struct Wire: Decodable {
        var requestURI: String?

        enum CodingKeys: String, CodingKey {
            case requestURI = "request_uri"
        }

        init(from decoder: any Decoder) throws {
            requestURI = try decoder.container(keyedBy: CodingKeys.self).lenient(forKey: .requestURI)
        }
    }
}
