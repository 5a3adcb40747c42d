public import Foundation
public import LatchkeyVault

/// What an ID token must satisfy to be accepted, and where the keys that sign it are.
///
/// OpenID providers take it from their metadata and client; firebase providers from their
/// project settings. One value, so both go through the same verification and key rotation.
public struct IDTokenExpectation: Sendable, Equatable {
    /// `iss` must equal this exactly.
    public var issuer: String
    /// `aud` must contain this: the client ID, or the Firebase project ID.
    public var audience: String
    public var jwksURI: URL
    /// The authorization request's `nonce`, when it sent one.
    public var nonce: Secret?
    /// The access token issued with the ID token: an ID token that carries `at_hash` must hash
    /// to it (OIDC Core §3.1.3.6), so one token cannot be swapped in beside another.
    public var accessToken: Secret?

    public init(issuer: String, audience: String, jwksURI: URL, nonce: Secret?, accessToken: Secret? = nil) {
        self.issuer = issuer
        self.audience = audience
        self.jwksURI = jwksURI
        self.nonce = nonce
        self.accessToken = accessToken
    }
}
