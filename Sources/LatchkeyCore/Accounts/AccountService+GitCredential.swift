public import Foundation
import LatchkeyVault

extension AccountService {
    /// What a git credential helper answers to `get`: the mapped provider's only (or default)
    /// account's user name and a valid access token, refreshed first when needed; `nil` when the
    /// request is not Latchkey's to answer (see `GitCredentialRequest.provider(in:)`).
    ///
    /// An ambiguous mapping or account, a locked vault or a failed refresh throws: the caller
    /// answers nothing and says why.
    public func gitCredential(for request: GitCredentialRequest, minimumLifetime: TimeInterval) async throws -> GitCredential? {
        guard let provider = try request.provider(in: catalog.providers) else { return nil }
        let token = try await validToken(
            for: AccountSelector(provider: provider.name), minimumLifetime: minimumLifetime, idToken: false)
        return GitCredential(username: provider.gitUsername, password: token)
    }
}
