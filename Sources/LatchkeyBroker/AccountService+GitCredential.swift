public import Foundation
public import LatchkeyVault
public import LatchkeyAccounts
public import LatchkeyCredentialHelpers
import LatchkeyProviders

extension AccountService {
    /// What a git credential helper answers to `get`: the mapped provider's only (or default)
    /// account's user name and a valid access token, refreshed first when needed (narrowed to
    /// the provider's `git_resource` when it names one, so git never holds the account's
    /// wider token); `nil` when the request is not Latchkey's to answer (see
    /// `GitCredentialRequest.provider(in:)`).
    ///
    /// `narrowing` is `git-credential --resource/--scope`: its resource replaces `git_resource`,
    /// its scopes narrow the token for whichever resource that leaves.
    ///
    /// An ambiguous mapping or account, a locked vault or a failed refresh throws: the caller
    /// answers nothing and says why.
    ///
    /// `interaction` signs the account in again when only that can give a token (see
    /// `validRecord(for:minimumLifetime:signingInWith:)`); git's own stdin and stdout are not
    /// the person's, so the caller passes one on the controlling terminal.
    public func gitCredential(
        for request: GitCredentialRequest, narrowing: TokenNarrowing? = nil, minimumLifetime: TimeInterval,
        signingInWith interaction: (any SignInInteraction)? = nil
    ) async throws -> GitCredential? {
        guard let provider = try request.provider(in: catalog.providers) else { return nil }
        let selector = AccountSelector(provider: provider.name)
        let record = try await validRecord(for: selector, minimumLifetime: minimumLifetime, signingInWith: interaction)
        let (token, _) = try await accessToken(
            of: record, narrowing: Self.gitNarrowing(narrowing, for: provider), minimumLifetime: minimumLifetime,
            signingInWith: interaction)
        return GitCredential(username: provider.gitUsername, password: token)
    }

    /// What git's token is narrowed to: `--resource` over the provider's `git_resource`, and
    /// `--scope`; `nil` for the account's own token.
    static func gitNarrowing(_ asked: TokenNarrowing?, for provider: Provider) -> TokenNarrowing? {
        let resource = asked?.resource ?? provider.gitResource
        let scopes = asked?.scopes ?? []
        return resource == nil && scopes.isEmpty ? nil : TokenNarrowing(resource: resource, scopes: scopes)
    }
}
