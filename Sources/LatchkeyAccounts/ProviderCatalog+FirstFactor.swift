public import LatchkeyProviders

extension ProviderCatalog {
    /// The `oidc` provider `name` whose sign-in is the first factor of the firebase provider
    /// `firebase` (`first_factor = "provider:NAME"`): only an ID token can be federated.
    public func openIDProvider(named name: String, firstFactorOf firebase: String) throws -> OAuthProvider {
        let provider = try provider(named: name)
        guard case .oidc(let client) = provider.kind else { throw SignInError.notOpenID(provider: name, firebase: firebase) }
        return OAuthProvider(provider, client: client)
    }
}
