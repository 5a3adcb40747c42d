public import LatchkeyProviders

/// Providers the targets check inputs against, read from provider-file text like a real one.
public enum FixedProvider {
    /// An `oidc` provider that leaves every endpoint to discovery, with a fixed redirect path.
    public static let openID = oauth(
        "fuzz-oidc",
        """
        display_name = "Fuzz OIDC"
        kind = "oidc"
        issuer = "https://idp.example.com/realms/main"
        client_id = "latchkey-fuzz-client"
        redirect_path = "/callback/fuzz"
        """)

    /// A plain OAuth 2.0 provider with explicit endpoints and no issuer.
    public static let plainOAuth = oauth(
        "fuzz-oauth2",
        """
        display_name = "Fuzz OAuth 2.0"
        kind = "oauth2"
        authorization_endpoint = "https://auth.example.com/authorize"
        token_endpoint = "https://auth.example.com/token"
        client_id = "latchkey-fuzz-client"
        loopback_host = "localhost"
        """)

    private static func oauth(_ name: String, _ text: String) -> OAuthProvider {
        guard case .success(let provider) = ProviderFileParser().parse(text, file: "/fuzz/providers.d/\(name).toml") else {
            fatalError("the fixed provider \(name) does not parse")
        }
        switch provider.kind {
        case .oidc(let client), .oauth2(let client): return OAuthProvider(provider, client: client)
        case .firebase: fatalError("the fixed provider \(name) is not an OAuth provider")
        }
    }
}
