public import Foundation
import LatchkeyKeystore
public import LatchkeyOAuth
import LatchkeyProviders
public import LatchkeyVault

/// Tokens for commands that run where a person may be (`token`, `exec`, `git-credential`, the
/// kubectl and container credential helpers): when an account cannot give a token without a
/// person (there is none yet, or its refresh token was refused, expired or never given), the
/// sign-in runs again at once, for that same account, and the command goes on as if nothing had
/// happened; with nobody to ask, the error says which command to run.
extension AccountService {
    /// Whether `error` is one a sign-in fixes: no such account, or no usable refresh token.
    public static func needsSignIn(_ error: any Error) -> Bool {
        switch error {
        case AccountSelectionError.notSignedIn: return true
        case RefreshError.refreshTokenRejected, RefreshError.noRefreshToken: return true
        default: return false
        }
    }

    /// The provider and account a sign-in error names, when it names an account that exists.
    package static func account(needingSignIn error: any Error) -> (provider: String, name: String)? {
        switch error {
        case RefreshError.refreshTokenRejected(let account, let provider), RefreshError.noRefreshToken(let account, let provider):
            return (provider, account)
        default:
            return nil
        }
    }

    /// `validRecord(for:minimumLifetime:)` for a command that hands the token on, signing in
    /// through `interaction` when only a sign-in can give a token: an account whose refresh
    /// failed, or whose sign-in is weaker or older than `stepUp` asks, is signed in again as
    /// itself (login hint, and another account coming back is refused), a missing one is added.
    /// Without an `interaction` the error is thrown as it is. Whether the token may then leave
    /// Latchkey is the broker's to decide, not this.
    public func usableRecord(
        for selector: AccountSelector, minimumLifetime: TimeInterval, signingInWith interaction: (any SignInInteraction)?,
        stepUp: StepUp = StepUp(), timeout: Duration = .seconds(300)
    ) async throws -> AccountRecord {
        let record: AccountRecord
        do {
            record = try await validRecord(for: selector, minimumLifetime: minimumLifetime)
        } catch  where Self.needsSignIn(error) {
            // A machine identity needs nobody to sign in.
            if let client = try catalog.provider(named: selector.provider).machineIdentity {
                return try await machineAccount(client)
            }
            guard let interaction else {
                // Nobody to sign in here: config.toml's hook tells the person (a desktop notification).
                if let hooks, let account = Self.account(needingSignIn: error) {
                    let reason = (error as? any LatchkeyError)?.description
                    await hooks.run(
                        HookEvent(.reauthNeeded, provider: account.provider, account: account.name, time: engine.now(), reason: reason))
                }
                throw error
            }
            try await signInAgain(selector, interaction, stepUp: stepUp, timeout: timeout)
            // Chosen again by the selector: an account added for `PROVIDER:NAME` that is not NAME
            // is stored, but its token is not handed out for NAME.
            return try await validRecord(for: selector, minimumLifetime: minimumLifetime)
        }
        guard let problem = stepUp.problem(with: record, at: engine.now()) else { return record }
        guard let interaction else { throw problem }
        try await signInAgain(selector, interaction, stepUp: stepUp, timeout: timeout)
        return try await validRecord(for: selector, minimumLifetime: minimumLifetime)
    }

    /// Signs `selector`'s account in again as itself, or adds it when there is none; `resource`
    /// is asked for as well as the provider file's `resources`.
    func signInAgain(
        _ selector: AccountSelector, naming resource: String? = nil, _ interaction: any SignInInteraction, stepUp: StepUp = StepUp(),
        timeout: Duration
    ) async throws {
        let named = try catalog.provider(named: selector.provider)
        let provider = resource.flatMap { named.naming(resources: [$0]) } ?? named
        let records = try await keystore.records()
        let meant = here?.selector(selector, among: records) ?? selector
        // The account that is there but cannot be refreshed is the one signed in again.
        let existing = (try? meant.index(in: records)).map { AccountSelector(provider: provider.name, account: records[$0].subject) }
        _ = try await signIn(provider: provider, account: existing, interaction: interaction, stepUp: stepUp, timeout: timeout)
    }
}
