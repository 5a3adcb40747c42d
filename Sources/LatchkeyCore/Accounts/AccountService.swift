public import Foundation

/// Signs in, hands out tokens, refreshes and signs out: the engine plus the keystore.
///
/// Everything the command line and the screen do with accounts goes through here, so both get
/// the same single-flight refresh and the same "store nothing unless everything checked out".
public struct AccountService: Sendable {
    public let catalog: ProviderCatalog
    public let keystore: any Keystore
    public let engine: SignInEngine

    public init(catalog: ProviderCatalog, keystore: any Keystore, engine: SignInEngine) {
        self.catalog = catalog
        self.keystore = keystore
        self.engine = engine
    }

    // MARK: - Sign-in

    public enum SignInOutcome: Sendable, Equatable {
        case added
        case updated
    }

    /// Runs a whole sign-in and stores the account only when every check passed.
    public func signIn(
        provider: Provider, mode: Provider.RedirectMode, interaction: any SignInInteraction, browser: BrowserLauncher,
        timeout: Duration = .seconds(300)
    ) async throws -> (AccountRecord, SignInOutcome) {
        guard !provider.clientID.isEmpty else { throw SignInError.missingClientID(provider: provider.name, file: provider.sourceFile) }
        // Unlock (or fail) before the browser round trip, not after it.
        _ = try await keystore.records()
        let metadata = try await engine.metadata(for: provider)
        let record: AccountRecord
        switch mode {
        case .loopback:
            record = try await signInWithListener(
                provider: provider, metadata: metadata, interaction: interaction, browser: browser, timeout: timeout)
        case .paste:
            // No listener: the port is only a placeholder the browser fails to reach, leaving the
            // whole redirect URL in its address bar for the person to copy.
            let pending = PendingAuthorization(
                provider: provider, metadata: metadata, redirectURI: provider.redirectURI(port: Self.pastePort()))
            await interaction.authorizationStarted(
                url: pending.authorizationURL, provider: provider, redirectURI: pending.redirectURI, listeningOn: [])
            let pasted = try await interaction.pasteRedirectURL(
                url: pending.authorizationURL, provider: provider, redirectURI: pending.redirectURI)
            let code = try pending.validate(try RedirectRequest(pastedURL: pasted))
            record = try await engine.exchange(code, for: pending)
        case .device:
            let authorization = try await engine.startDeviceAuthorization(provider: provider, metadata: metadata)
            await interaction.deviceCodeIssued(authorization, provider: provider)
            record = try await engine.completeDeviceAuthorization(authorization, provider: provider, metadata: metadata)
        }
        return (record, try await store(record))
    }

    private func signInWithListener(
        provider: Provider, metadata: ServerMetadata, interaction: any SignInInteraction, browser: BrowserLauncher, timeout: Duration
    ) async throws -> AccountRecord {
        // Bound before the browser opens (RFC 8252 §7.3), so the redirect cannot race the listener.
        let listener = try await LoopbackListener.bind(preferIPv6: provider.loopbackHost == .ipv6)
        let pending = PendingAuthorization(provider: provider, metadata: metadata, redirectURI: provider.redirectURI(port: listener.port))
        await interaction.authorizationStarted(
            url: pending.authorizationURL, provider: provider, redirectURI: pending.redirectURI, listeningOn: listener.addresses)
        do {
            try browser.open(pending.authorizationURL)
        } catch {
            await interaction.browserUnavailable(url: pending.authorizationURL, reason: error.description)
        }
        let request = await listener.firstRequest(timeout: timeout)
        await listener.close()
        guard let request else { throw SignInError.timedOut(provider: provider.name, seconds: Int(timeout.components.seconds)) }
        let code = try pending.validate(request)
        return try await engine.exchange(code, for: pending)
    }

    /// A port for the paste-mode redirect URI, from the dynamic range: nothing listens there, so
    /// the browser stops with the whole redirect URL in its address bar.
    static func pastePort() -> Int {
        Int.random(in: 49_152...65_535)
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
        let record = try selector.select(from: try await keystore.records())
        if record.isValid(at: engine.now(), margin: minimumLifetime) { return try token(of: record, idToken: idToken) }
        let fresh = try await refreshUnderLock(selector: selector, minimumLifetime: minimumLifetime)
        return try token(of: fresh, idToken: idToken)
    }

    /// Refreshes `selector`'s account now (the screen's `r`), whatever its expiry.
    public func refresh(_ selector: AccountSelector) async throws -> AccountRecord {
        try await refreshUnderLock(selector: selector, minimumLifetime: .infinity)
    }

    private func refreshUnderLock(selector: AccountSelector, minimumLifetime: TimeInterval) async throws -> AccountRecord {
        let provider = try catalog.provider(named: selector.provider)
        let outcome: Result<AccountRecord, any Error> = try await keystore.update { records in
            let current = try selector.select(from: records)
            if minimumLifetime.isFinite && current.isValid(at: engine.now(), margin: minimumLifetime) { return .success(current) }
            guard let index = records.firstIndex(where: { $0.isSameAccount(as: current) }) else { return .success(current) }
            do {
                let refreshed =
                    provider.isFirebase
                    ? try await refreshSecondFactorAccount(current, provider: provider)
                    : try await engine.refresh(current, provider: provider, metadata: try await engine.metadata(for: provider))
                records[index] = refreshed
                return .success(refreshed)
            } catch {
                // Keep the account: a failed refresh is shown, never answered by deleting tokens.
                // The record was re-read under the lock, so `invalid_grant` here is not a lost race.
                let failure: any Error =
                    (error as? TokenEndpointError)?.isInvalidGrant == true
                    ? RefreshError.refreshTokenRejected(account: current.label, provider: provider.name) : error
                records[index].lastError = (failure as? any LatchkeyError)?.description ?? String(describing: failure)
                return .failure(failure)
            }
        }
        return try outcome.get()
    }

    private func token(of record: AccountRecord, idToken: Bool) throws -> Secret {
        guard idToken else { return record.accessToken }
        guard let token = record.idToken else { throw SignInError.noIDToken(account: record.label) }
        return token
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
                let metadata = try await engine.metadata(for: provider)
                revocation = .success(try await engine.revoke(record, provider: provider, metadata: metadata))
            } catch {
                revocation = .failure(error)
            }
            records.removeAll { $0.isSameAccount(as: record) }
            return (record, revocation)
        }
    }
}

public enum SignInError: LatchkeyError, Equatable {
    case missingClientID(provider: String, file: String)
    case timedOut(provider: String, seconds: Int)
    case cancelled
    case noIDToken(account: String)

    public var category: FailureCategory {
        switch self {
        case .missingClientID: return .configuration
        case .timedOut, .cancelled: return .unavailable
        case .noIDToken: return .notFound
        }
    }

    public var description: String {
        switch self {
        case .missingClientID(let provider, let file):
            return "\(provider) has no client_id yet: register a native/desktop client at the provider and set client_id in \(file)"
        case .timedOut(let provider, let seconds):
            return
                "no answer from the browser for \(provider) within \(seconds) s; the sign-in was abandoned (try --paste when the browser runs on another machine)"
        case .cancelled:
            return "the sign-in was cancelled"
        case .noIDToken(let account):
            return "\(TerminalText.sanitized(account, maxLength: 100)) has no ID token (plain OAuth 2.0 provider?)"
        }
    }
}
