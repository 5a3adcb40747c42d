public import Foundation
import LatchkeyEssentials
public import LatchkeySupport
public import LatchkeyVault

/// The registration endpoint's answer (RFC 7591 §3.2.1) as far as Latchkey uses it, with what
/// says whether the server registered the public client it was asked for.
public struct ClientRegistrationResponse: Sendable {
    /// `client_id`
    public var clientID: String
    /// `registration_access_token` (RFC 7592 §3)
    public var registrationAccessToken: Secret?
    /// `registration_client_uri` (RFC 7592 §3)
    public var registrationClientURI: URL?
    /// `token_endpoint_auth_method` as registered, when the server says.
    public var tokenEndpointAuthMethod: String?
    /// Whether a `client_secret` came back: a public client has none.
    public var hasClientSecret: Bool

    static let endpoint = "registration endpoint"

    /// 201 (RFC 7591 §3.2.1; glewlwyd answers 200) with a `client_id`; an error body
    /// (§3.2.2, the shape of RFC 6749 §5.2) is the server's refusal.
    /// `registration` is the endpoint that answered: the client URI it gives must be on its origin.
    public static func parse(_ response: HTTPResponse, from registration: URL) throws(TokenEndpointError) -> ClientRegistrationResponse {
        if let error = OAuthErrorResponse(body: response.body) { throw .oauth(endpoint: endpoint, error) }
        guard response.status == 201 || response.status == 200 else {
            let why =
                [401, 403].contains(response.status)
                ? "the server lets only holders of an initial access token register (RFC 7591 §3), which Latchkey does not have; register a client by hand and set client_id in the provider file"
                : "the server refused to register a client without saying why"
            throw .malformed(endpoint: endpoint, reason: "HTTP \(response.status) without an OAuth error: \(why)")
        }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(response.body)) else {
            throw .malformed(endpoint: endpoint, reason: "the body is not a JSON object")
        }
        // It goes into URLs and forms: visible ASCII, within reason.
        guard let clientID = wire.clientID, !clientID.isEmpty, clientID.count <= 512,
            clientID.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
        else {
            throw .malformed(endpoint: endpoint, reason: "client_id is missing or not printable text")
        }
        var clientURI: URL?
        if let raw = wire.registrationClientURI {
            // Deleted with the registration access token, perhaps before any browser opens: a URI
            // elsewhere would send that request, and its token, to any service the answer names.
            switch EndpointURL.validate(raw, sameOriginAs: registration) {
            case .success(let url): clientURI = url
            case .failure(let problem): throw .malformed(endpoint: endpoint, reason: "registration_client_uri: \(problem.description)")
            }
        }
        if let problem = TokenText.problem(wire.registrationAccessToken, member: "registration_access_token") {
            throw .malformed(endpoint: endpoint, reason: problem)
        }
        return ClientRegistrationResponse(
            clientID: clientID, registrationAccessToken: wire.registrationAccessToken.map(Secret.init), registrationClientURI: clientURI,
            tokenEndpointAuthMethod: wire.tokenEndpointAuthMethod, hasClientSecret: wire.clientSecret != nil)
    }

    /// What the answer itself shows the server got wrong about a public client, if anything.
    public var confidentialityProblem: String? {
        if let method = tokenEndpointAuthMethod, method != "none" {
            return
                "it registered token_endpoint_auth_method \"\(TerminalText.sanitized(method, maxLength: 40))\" although \"none\" (a public client) was asked for"
        }
        if hasClientSecret {
            return "it gave the client a client_secret although a public client (token_endpoint_auth_method \"none\") was asked for"
        }
        return nil
    }

    struct Wire: Decodable {
        var clientID: String?
        var registrationAccessToken: String?
        var registrationClientURI: String?
        var tokenEndpointAuthMethod: String?
        var clientSecret: String?

        enum CodingKeys: String, CodingKey {
            case clientID = "client_id"
            case registrationAccessToken = "registration_access_token"
            case registrationClientURI = "registration_client_uri"
            case tokenEndpointAuthMethod = "token_endpoint_auth_method"
            case clientSecret = "client_secret"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            clientID = container.lenient(forKey: .clientID)
            registrationAccessToken = container.lenient(forKey: .registrationAccessToken)
            registrationClientURI = container.lenient(forKey: .registrationClientURI)
            tokenEndpointAuthMethod = container.lenient(forKey: .tokenEndpointAuthMethod)
            clientSecret = container.lenient(forKey: .clientSecret)
        }
    }
}
