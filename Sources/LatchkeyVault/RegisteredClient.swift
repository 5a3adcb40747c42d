public import FoundationEssentials

/// A client Latchkey registered for itself at a provider (RFC 7591), kept once per provider: the
/// `client_id` every account of the provider uses, and the registration access token that
/// deletes the registration (RFC 7592). The token is as secret as a refresh token.
public struct RegisteredClient: Codable, Sendable, Equatable {
    /// The provider (file stem) it was registered for.
    public var provider: String
    /// The registration endpoint it was registered at: a provider file now pointing at another
    /// server registers again.
    public var registrationEndpoint: String
    /// `redirect_uris` as registered: servers match them exactly, so other ports register again.
    public var redirectURIs: [String]
    /// `client_id` (RFC 7591 §3.2.1)
    public var clientID: String
    /// `registration_access_token` (RFC 7592 §3): `nil` when the server gave none.
    public var registrationAccessToken: Secret?
    /// `registration_client_uri` (RFC 7592 §3): where the registration is deleted; `nil` when
    /// the server does not offer management.
    public var registrationClientURI: String?
    public var registeredAt: Date
    /// Whether the server registered it for the device authorization grant (RFC 8628): `true`
    /// when it did, `false` when it was asked and refused (then the client was registered
    /// without), `nil` when it offered no device grant, or for a client kept before this was
    /// recorded.
    public var grantsDeviceCode: Bool?

    public init(
        provider: String, registrationEndpoint: String, redirectURIs: [String], clientID: String, registrationAccessToken: Secret?,
        registrationClientURI: String?, registeredAt: Date, grantsDeviceCode: Bool? = nil
    ) {
        self.provider = provider
        self.registrationEndpoint = registrationEndpoint
        self.redirectURIs = redirectURIs
        self.clientID = clientID
        self.registrationAccessToken = registrationAccessToken
        self.registrationClientURI = registrationClientURI
        self.registeredAt = registeredAt
        self.grantsDeviceCode = grantsDeviceCode
    }
}
