import Foundation
import LatchkeyProviders

/// The client metadata Latchkey registers itself with (RFC 7591 §2): a native public client
/// (RFC 8252 §8.4) signing people in with the authorization code grant, PKCE and refresh tokens
/// at loopback redirect URIs, and with a device code where the server offers one (RFC 8628).
struct ClientRegistrationRequest: Encodable {
    /// The device authorization grant's type (RFC 8628 §3.4), asked for in `grant_types` where the
    /// server has a device authorization endpoint: a sign-in over SSH or for `mcp proxy`'s step-up
    /// without a display needs it.
    static let deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    /// `redirect_uris`
    var redirectURIs: [String]
    /// `client_name`
    var clientName: String
    /// `scope`: what the sign-ins will ask for, space-separated.
    var scope: String
    /// `token_endpoint_auth_method`: `none`, a public client (RFC 7591 §2).
    var tokenEndpointAuthMethod = "none"
    /// `grant_types`: refresh tokens too, which some servers (glewlwyd) leave out by default.
    var grantTypes = ["authorization_code", "refresh_token"]
    /// `response_types`
    var responseTypes = ["code"]
    /// `application_type` (OpenID Connect Dynamic Client Registration §2)
    var applicationType = "native"
    /// `client_confidential`: glewlwyd's own member. It registers a client that asked for
    /// `token_endpoint_auth_method` `none` as confidential unless this says `false` too, so it
    /// goes only in a second registration, after the first was refused as a public client.
    var clientConfidential: Bool?

    enum CodingKeys: String, CodingKey {
        case redirectURIs = "redirect_uris"
        case clientName = "client_name"
        case scope
        case tokenEndpointAuthMethod = "token_endpoint_auth_method"
        case grantTypes = "grant_types"
        case responseTypes = "response_types"
        case applicationType = "application_type"
        case clientConfidential = "client_confidential"
    }

    /// The request for `provider`, registering `redirectURIs`, for the device grant too when
    /// `withDeviceGrant`.
    init(provider: OAuthProvider, redirectURIs: [String], assertingPublic: Bool = false, withDeviceGrant: Bool = false) {
        self.redirectURIs = redirectURIs
        clientName = "Latchkey (\(provider.name))"
        scope = provider.scopes.joined(separator: " ")
        clientConfidential = assertingPublic ? false : nil
        if withDeviceGrant { grantTypes.append(Self.deviceGrantType) }
    }

    var body: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(self)) ?? Data())
    }
}
