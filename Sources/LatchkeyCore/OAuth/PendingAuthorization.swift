public import Foundation
public import LatchkeyVault

/// One authorization request in flight, bound to everything its response must match.
///
/// RFC 8252 §8.10 mix-up defence: a response is accepted only at this request's own redirect URI,
/// with this request's `state`, from this request's issuer; the verifier and nonce never leave it.
public struct PendingAuthorization: Sendable {
    public let provider: OAuthProvider
    public let metadata: ServerMetadata
    /// The exact `redirect_uri` sent, repeated byte for byte in the token request.
    public let redirectURI: String
    public let state: Secret
    public let pkce: PKCE
    /// `nonce` (OIDC Core §3.1.2.1), only for `oidc` providers.
    public let nonce: Secret?
    /// `login_hint` (OIDC Core §3.1.2.1): the account a re-sign-in is for, so the provider
    /// preselects it.
    public let loginHint: String?

    public init(provider: OAuthProvider, metadata: ServerMetadata, redirectURI: String, loginHint: String? = nil) {
        self.loginHint = loginHint
        self.provider = provider
        self.metadata = metadata
        self.redirectURI = redirectURI
        self.state = Secret(SecureRandom.token())
        self.pkce = PKCE()
        self.nonce = provider.isOpenID ? Secret(SecureRandom.token()) : nil
    }

    /// The URL the browser opens (RFC 6749 §4.1.1, RFC 7636 §4.3).
    public var authorizationURL: URL {
        var components = URLComponents(url: metadata.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: provider.clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "scope", value: provider.scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: state.exposedValue),
            URLQueryItem(name: "code_challenge", value: pkce.challenge),
            URLQueryItem(name: "code_challenge_method", value: PKCE.method),
        ]
        if let nonce { items.append(URLQueryItem(name: "nonce", value: nonce.exposedValue)) }
        if let loginHint { items.append(URLQueryItem(name: "login_hint", value: loginHint)) }
        for key in provider.extraAuthorizationParameters.keys.sorted() where !(key == "login_hint" && loginHint != nil) {
            items.append(URLQueryItem(name: key, value: provider.extraAuthorizationParameters[key]))
        }
        components.percentEncodedQuery = FormEncoding.encode(items.map { ($0.name, $0.value ?? "") })
        return components.url!
    }
}
