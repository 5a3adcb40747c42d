public import Foundation
public import LatchkeyAccounts
public import LatchkeyClouds
public import LatchkeyOAuth
public import LatchkeyVault
import LatchkeyProviders

extension AccountService {
    /// `awsCredential(of:asked:_:environment:)` for `selector`'s account, its options checked
    /// before anything else, the account made valid (refreshed, or signed in again through
    /// `interaction`) and released only as `confirm` allows.
    public func awsCredential(
        for selector: AccountSelector, _ options: AWSCredentialOptions, minimumLifetime: TimeInterval, environment: [String: String],
        signingInWith interaction: (any SignInInteraction)? = nil
    ) async throws -> AWSRoleCredential {
        _ = try options.checked(settings: try catalog.provider(named: selector.provider).aws, provider: selector.provider, environment: environment)
        let record = try await validRecord(for: selector, minimumLifetime: minimumLifetime, signingInWith: interaction)
        return try await awsCredential(of: record, asked: selector, options, environment: environment)
    }
}
