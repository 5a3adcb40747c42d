public import Foundation
public import LatchkeyProviders
import LatchkeySupport
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
    /// The key the tokens will be bound to (RFC 9449), announced as `dpop_jkt` (§10) so the code
    /// is bound to it too; `nil` for bearer tokens.
    public let dpopKey: DPoPKey?
    /// `request_uri` from the PAR endpoint (RFC 9126 §2.2), once the request was pushed: the
    /// browser then carries only it and `client_id`.
    public private(set) var requestURI: String?

    /// `acr_values` and `max_age`, and what the new ID token must then show (`--acr`, `--max-age`).
    public let stepUp: StepUp

    public init(
        provider: OAuthProvider, metadata: ServerMetadata, redirectURI: String, loginHint: String? = nil,
        dpopKey: DPoPKey? = nil, stepUp: StepUp = StepUp()
    ) {
        self.stepUp = stepUp
        self.loginHint = loginHint
        self.provider = provider
        self.metadata = metadata
        self.redirectURI = redirectURI
        self.state = Secret(SecureRandom.token())
        self.pkce = PKCE()
        self.nonce = provider.isOpenID ? Secret(SecureRandom.token()) : nil
        self.dpopKey = dpopKey
    }

    /// The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3), in the browser's URL or pushed.
    public var parameters: [(String, String)] {
        var items = [
            ("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", redirectURI),
            ("scope", provider.scopes.joined(separator: " ")), ("state", state.exposedValue),
            ("code_challenge", pkce.challenge), ("code_challenge_method", PKCE.method),
        ]
        if let nonce { items.append(("nonce", nonce.exposedValue)) }
        if let loginHint { items.append(("login_hint", loginHint)) }
        if let dpopKey { items.append(("dpop_jkt", dpopKey.thumbprint)) }
        items += provider.choices.resources.map { ("resource", $0) }
        items += stepUp.parameters
        for key in provider.extraAuthorizationParameters.keys.sorted() where !(key == "login_hint" && loginHint != nil) {
            items.append((key, provider.extraAuthorizationParameters[key] ?? ""))
        }
        return items
    }

    /// The URL the browser opens: every parameter, or only `client_id` and `request_uri` once
    /// the request was pushed (RFC 9126 §4).
    public var authorizationURL: URL {
        var components = URLComponents(url: metadata.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        let items = (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }
        let request = requestURI.map { [("client_id", provider.clientID), ("request_uri", $0)] } ?? parameters
        components.percentEncodedQuery = FormEncoding.encode(items + request)
        return components.url!
    }

    /// This request, pushed: its `request_uri` stands for it from now on.
    public func pushed(requestURI: String) -> PendingAuthorization {
        var pushed = self
        pushed.requestURI = requestURI
        return pushed
    }
}
