public import Foundation
public import LatchkeyKeystore
public import LatchkeyOAuth
public import LatchkeyProviders
import LatchkeySecondFactor
public import LatchkeyVault

/// Signs in, hands out tokens, refreshes and signs out: the protocol engines plus the keystore.
///
/// Everything the command line and the screen do with accounts goes through here, so both get
/// the same single-flight refresh and the same "store nothing unless everything checked out".
public struct AccountService: Sendable {
    private let providers: LazyProviderCatalog
    public let keystore: any Keystore
    public let engine: OAuthEngine
    public let browser: any Browser
    public let listeners: any RedirectListenerFactory
    /// Where the command runs and what config.toml maps there; `nil` when nothing is mapped.
    public let here: WorkingDirectory?
    /// config.toml's hooks for sign-ins and failed refreshes; `nil` runs none (the agent runs
    /// its own, with the release and expiry hooks only it can fire).
    public let hooks: Hooks?
    /// Which accounts a command asks a person about before handing their token on (`confirm =
    /// true`); `nil` asks about none (the agent asks on its own, the screen is the person).
    package let releasePolicy: ReleasePolicy?

    /// Every provider, loaded on first use (see `LazyProviderCatalog`).
    public var catalog: ProviderCatalog { providers.catalog }

    /// Reads providers.d again, after a provider file was added.
    @discardableResult
    public func reloadCatalog() -> ProviderCatalog { providers.reload() }

    public init(
        catalog: ProviderCatalog, keystore: any Keystore, engine: OAuthEngine, browser: any Browser,
        listeners: any RedirectListenerFactory = LoopbackListenerFactory(), here: WorkingDirectory? = nil, hooks: Hooks? = nil
    ) {
        self.init(
            loadingCatalog: { catalog }, keystore: keystore, engine: engine, browser: browser, listeners: listeners, here: here,
            hooks: hooks)
    }

    /// `loadingCatalog` runs once, when something first needs a provider.
    public init(
        loadingCatalog: @escaping @Sendable () -> ProviderCatalog, keystore: any Keystore, engine: OAuthEngine, browser: any Browser,
        listeners: any RedirectListenerFactory = LoopbackListenerFactory(), here: WorkingDirectory? = nil, hooks: Hooks? = nil
    ) {
        self.init(
            providers: LazyProviderCatalog(loadingCatalog), keystore: keystore, engine: engine, browser: browser, listeners: listeners,
            here: here, hooks: hooks, releasePolicy: nil)
    }

    /// `providers` shared with `releasePolicy`, so the catalog is read once.
    package init(
        providers: LazyProviderCatalog, keystore: any Keystore, engine: OAuthEngine, browser: any Browser,
        listeners: any RedirectListenerFactory, here: WorkingDirectory?, hooks: Hooks?, releasePolicy: ReleasePolicy?
    ) {
        self.here = here
        self.hooks = hooks
        self.releasePolicy = releasePolicy
        self.providers = providers
        self.keystore = keystore
        self.engine = engine
        self.browser = browser
        self.listeners = listeners
    }

    // MARK: - Sign-in

    public enum SignInOutcome: Sendable, Equatable {
        case added
        case updated
    }

    /// Runs a whole sign-in of any kind (`SignInFlow`) and stores the account only when every
    /// check passed. `mode` overrides the redirect mode of the provider (or of its first factor);
    /// `account` makes it a re-sign-in of that account, refused if another one comes back;
    /// `stepUp` asks for a stronger or fresher authentication and refuses a weaker one.
    public func signIn(
        provider: Provider, mode: OAuthClient.RedirectMode? = nil, account: AccountSelector? = nil, interaction: any SignInInteraction,
        stepUp: StepUp = StepUp(), timeout: Duration = .seconds(300)
    ) async throws -> (AccountRecord, SignInOutcome) {
        if let oauth = provider.machineIdentity { return try await signInAsClient(oauth) }
        var expected: SignInFlow.ExpectedAccount?
        if let account { expected = SignInFlow.ExpectedAccount(try account.select(from: try await keystore.records())) }
        let flow = SignInFlow(provider: provider, mode: mode, expected: expected, stepUp: stepUp)
        let (record, outcome) = try await SignInRunner(service: self, interaction: interaction, timeout: timeout).run(flow)
        await hooks?.run(HookEvent(.signIn, provider: record.provider, account: record.label, time: engine.now()))
        return (record, outcome)
    }

    /// A machine identity's sign-in (`grant = "client_credentials"`): no person, no browser.
    func signInAsClient(_ provider: OAuthProvider) async throws -> (AccountRecord, SignInOutcome) {
        let record = try await clientCredentials(provider)
        return (record, try await store(record))
    }

    /// The client credentials grant's account for `provider`, renewing the one kept (its DPoP key).
    private func clientCredentials(_ provider: OAuthProvider) async throws -> AccountRecord {
        let existing = try await keystore.records().first { $0.provider == provider.name && $0.subject == provider.clientID }
        return try await engine.clientCredentials(
            provider: provider, metadata: try await engine.metadata(for: provider), replacing: existing)
    }

    /// A machine identity's account for a command that hands its token on: kept in the vault as
    /// any account, except where there is no vault and nothing to create one with (a CI job with
    /// neither a vault nor a passphrase file). There the grant's token serves this command alone
    /// and nothing is written: a machine needs no vault to be itself.
    func machineAccount(_ provider: OAuthProvider) async throws -> AccountRecord {
        let record = try await clientCredentials(provider)
        do {
            // Asked first: `store` would create the vault's directory and lock file before it
            // finds there is no passphrase.
            try await keystore.prepareForWriting()
        } catch .noVault {
            return record
        }
        _ = try await store(record)
        return record
    }

    /// For a machine account no vault keeps (`machineAccount`), the token for `narrowing`: a
    /// grant of its own, for this command alone. `nil` for every account the vault keeps.
    func unkeptMachineToken(of record: AccountRecord, _ narrowing: TokenNarrowing) async throws -> Secret? {
        guard let provider = try catalog.provider(named: record.provider).machineIdentity,
            try await !keystore.records().contains(where: { $0.isSameAccount(as: record) })
        else { return nil }
        let metadata = try await engine.metadata(for: provider)
        return try await engine.narrowedToken(record, narrowing, provider: provider, metadata: metadata).0.accessToken
    }

    /// Adds the account, or updates it when the same identity signs in again.
    func store(_ record: AccountRecord) async throws -> SignInOutcome {
        try await keystore.update { records in
            guard let index = records.firstIndex(where: { $0.isSameAccount(as: record) }) else {
                records.append(record)
                return .added
            }
            var updated = record
            updated.createdAt = records[index].createdAt
            // Some providers send a refresh token only on the first consent; keep the one we have.
            updated.refreshToken = record.refreshToken ?? records[index].refreshToken
            records[index] = updated
            return .updated
        }
    }

    // MARK: - Tokens

    /// A token valid for at least `minimumLifetime` seconds, refreshing first when needed.
    ///
    /// Single-flight: the refresh happens under the keystore's exclusive lock after re-reading the
    /// record, so concurrent callers wait and then find the fresh token instead of spending the
    /// (rotating) refresh token twice.
    public func validToken(for selector: AccountSelector, minimumLifetime: TimeInterval, idToken: Bool) async throws -> Secret {
        try token(of: try await validRecord(for: selector, minimumLifetime: minimumLifetime), idToken: idToken)
    }

    /// The account with tokens valid for at least `minimumLifetime` seconds, refreshed first when
    /// needed (single-flight, as `validToken`), for callers that need both tokens of one grant.
    ///
    /// A bare `PROVIDER` means the account config.toml maps it to in the working directory
    /// (`[directories."PATH"]`), when there is one.
    public func validRecord(for selector: AccountSelector, minimumLifetime: TimeInterval) async throws -> AccountRecord {
        let records = try await keystore.records()
        let selector = here?.selector(selector, among: records) ?? selector
        let record = try selector.select(from: records)
        if record.isValid(at: engine.now(), margin: minimumLifetime) { return record }
        return try await refreshUnderLock(record, minimumLifetime: minimumLifetime)
    }

    /// The very account `chosen` is (by identity, whatever a selector naming it would pick) as
    /// the keystore holds it now, refreshed first when its token is valid for less than
    /// `minimumLifetime` (single-flight, as `validRecord(for:minimumLifetime:)`).
    public func validRecord(of chosen: AccountRecord, minimumLifetime: TimeInterval) async throws -> AccountRecord {
        guard let current = try await keystore.record(chosen.identity) else {
            // A machine identity's account no vault keeps (`machineAccount`): its grant serves
            // this command alone.
            let unkept = (try? catalog.provider(named: chosen.provider).machineIdentity) != nil
            if unkept && chosen.isValid(at: engine.now(), margin: minimumLifetime) { return chosen }
            throw signedOutMeanwhile(chosen)
        }
        if current.isValid(at: engine.now(), margin: minimumLifetime) { return current }
        return try await refreshUnderLock(current, minimumLifetime: minimumLifetime)
    }

    /// Refreshes the very account `chosen` is now, whatever its expiry, if `needed` says so of it
    /// as it is under the keystore's lock.
    public func refresh(_ chosen: AccountRecord, if needed: @escaping (AccountRecord) throws -> Bool) async throws -> AccountRecord {
        try await refreshUnderLock(chosen, minimumLifetime: .infinity, needed: needed)
    }

    /// Refreshes `selector`'s account now (the screen's `r`), whatever its expiry; with `needed`,
    /// only if it says so of the account as it is under the keystore's lock (a refresh for one
    /// token a server refused, which another process may have replaced meanwhile).
    public func refresh(
        _ selector: AccountSelector, if needed: ((AccountRecord) throws -> Bool)? = nil
    ) async throws -> AccountRecord {
        try await refreshUnderLock(try selector.select(from: try await keystore.records()), minimumLifetime: .infinity, needed: needed)
    }

    /// Refreshes `chosen`'s account under its lock (`Keystore.updateAccount`), unless the record
    /// read there again is valid for `minimumLifetime` (another process refreshed it meanwhile)
    /// or `needed` says no.
    private func refreshUnderLock(
        _ chosen: AccountRecord, minimumLifetime: TimeInterval, needed: ((AccountRecord) throws -> Bool)? = nil
    ) async throws -> AccountRecord {
        let provider = try catalog.provider(named: chosen.provider)
        let outcome: Result<AccountRecord, any Error> = try await keystore.updateAccount(chosen.identity) { record in
            guard let current = record else { return .failure(signedOutMeanwhile(chosen)) }
            if minimumLifetime.isFinite && current.isValid(at: engine.now(), margin: minimumLifetime) { return .success(current) }
            if let needed, try !needed(current) { return .success(current) }
            do {
                let refreshed = try await refreshed(current, provider: provider)
                // A machine identity's grant names the account after the provider file's client
                // and issuer, which may have been edited since: that is another account.
                guard refreshed.identity == current.identity else { throw RefreshError.identityChanged }
                record = refreshed
                return .success(refreshed)
            } catch {
                // Keep the account: a failed refresh is shown, never answered by deleting tokens.
                // The record was re-read under the lock, so `invalid_grant` here is not a lost race.
                let failure: any Error =
                    (error as? TokenEndpointError)?.isInvalidGrant == true
                    ? RefreshError.refreshTokenRejected(account: current.label, provider: provider.name) : error
                record?.lastError = (failure as? any LatchkeyError)?.description ?? String(describing: failure)
                return .failure(failure)
            }
        }
        if case .failure(let failure) = outcome, !(failure is AccountSelectionError), let hooks {
            let reason = (failure as? any LatchkeyError)?.description ?? String(describing: failure)
            await hooks.run(HookEvent(.refreshFailed, provider: chosen.provider, account: chosen.label, time: engine.now(), reason: reason))
        }
        return try outcome.get()
    }

    /// Why an account chosen a moment ago cannot be refreshed: it was signed out (here or on
    /// another machine sharing the keystore) before its lock was taken.
    package func signedOutMeanwhile(_ chosen: AccountRecord) -> AccountSelectionError {
        .notSignedIn(AccountSelector(provider: chosen.provider, account: chosen.label), available: [])
    }

    /// `record` with new tokens from its provider's refresh grant.
    private func refreshed(_ record: AccountRecord, provider: Provider) async throws -> AccountRecord {
        switch provider.kind {
        case .oidc(let client), .oauth2(let client):
            let oauth = try await withClientID(OAuthProvider(provider, client: client))
            return try await engine.withMetadata(for: oauth) { metadata in
                guard client.choices.grant == .clientCredentials else {
                    return try await engine.refresh(record, provider: oauth, metadata: metadata)
                }
                var renewed = try await engine.clientCredentials(provider: oauth, metadata: metadata, replacing: record)
                renewed.createdAt = record.createdAt
                renewed.isDefault = record.isDefault
                return renewed
            }
        case .firebase(let settings):
            return try await refreshFirebaseAccount(record, provider: FirebaseProvider(provider, settings: settings))
        }
    }

    /// The record's access token, or its ID token (which plain OAuth 2.0 accounts lack).
    public func token(of record: AccountRecord, idToken: Bool) throws -> Secret {
        guard idToken else { return record.accessToken }
        guard let token = record.idToken else { throw SignInError.noIDToken(account: record.label) }
        return token
    }

    /// Enrolls `phoneNumber` (E.164) as a second factor of `selector`'s account, which must be
    /// signed in at a firebase provider; the code is asked for through `interaction`.
    public func enrollPhone(
        _ selector: AccountSelector, phoneNumber: String, displayName: String?, interaction: any SignInInteraction
    ) async throws -> AccountRecord {
        let provider = try catalog.provider(named: selector.provider)
        switch provider.kind {
        case .oidc, .oauth2:
            throw FirebaseAuthError.notEnrollable(provider: provider.name)
        case .firebase(let settings):
            let account = try selector.select(from: try await keystore.records())
            return try await enrollPhone(
                (phoneNumber, displayName), on: account, at: FirebaseProvider(provider, settings: settings), interaction: interaction)
        }
    }

    /// Makes `selector`'s account the one a bare provider name selects.
    public func makeDefault(_ selector: AccountSelector) async throws -> AccountRecord {
        try await keystore.update { records in
            let chosen = try selector.select(from: records)
            for index in records.indices where records[index].provider == chosen.provider {
                records[index].isDefault = records[index].isSameAccount(as: chosen) ? true : nil
            }
            var updated = chosen
            updated.isDefault = true
            return updated
        }
    }

    // MARK: - Sign-out

    /// Revokes at the provider (when it can), then deletes the account.
    ///
    /// The account is deleted even when revocation fails at the network level, because the person
    /// asked to sign out; the outcome says what happened at the provider.
    public func signOut(_ selector: AccountSelector) async throws -> (AccountRecord, Result<RevocationOutcome, any Error>) {
        let provider = try catalog.provider(named: selector.provider)
        return try await keystore.update { records in
            let record = try selector.select(from: records)
            let revocation: Result<RevocationOutcome, any Error>
            do {
                revocation = .success(try await revoke(record, provider: provider))
            } catch {
                revocation = .failure(error)
            }
            records.removeAll { $0.isSameAccount(as: record) }
            return (record, revocation)
        }
    }

    /// Revokes at an OAuth provider; Identity Platform offers public clients no revocation.
    private func revoke(_ record: AccountRecord, provider: Provider) async throws -> RevocationOutcome {
        switch provider.kind {
        case .oidc(let client), .oauth2(let client):
            let oauth = try await withClientID(OAuthProvider(provider, client: client))
            return try await engine.revoke(record, provider: oauth, metadata: try await engine.metadata(for: oauth))
        case .firebase:
            return .unsupported
        }
    }
}
