public import LatchkeyProviders

extension ProviderDraft {
    /// Whether the issuer of a draft without a preset or a client ID registers clients itself:
    /// its discovery document lists a `registration_endpoint` (RFC 8414 §2). A discovery that
    /// fails answers why, and the file then asks for a `client_id` as before.
    public func offersRegistration(engine: OAuthEngine) async -> Result<Bool, any Error> {
        guard preset == nil, clientID == nil, issuer != nil, let provider = blankProvider() else { return .success(false) }
        do {
            return .success(try await engine.metadata(for: provider).registrationEndpoint != nil)
        } catch {
            return .failure(error)
        }
    }
}
