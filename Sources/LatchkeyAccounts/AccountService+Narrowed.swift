public import Foundation
import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeyOAuth
import LatchkeyProviders
public import LatchkeyVault

/// Why a narrower token cannot be had.
public enum NarrowingError: LatchkeyError, Equatable {
    /// Scopes the account was never granted: a refresh can only narrow (RFC 6749 §6).
    case scopesNotGranted([String], account: String, provider: String)
    /// A firebase provider has no refresh grant with resources or scopes.
    case notOAuth(provider: String)
    /// The refresh grant for `resource` was answered `invalid_target` (RFC 8707 §2): servers such
    /// as glewlwyd accept at refresh only a resource the sign-in named, so a sign-in naming it
    /// is what can help.
    case resourceNotSignedIn(String, account: String, provider: String)
    /// Not a resource indicator (`ResourceIndicator.problem` says why): refused before the
    /// provider is asked or anything is kept, whichever door it came in by.
    case invalidResource(problem: String)

    public var category: FailureCategory {
        switch self {
        case .scopesNotGranted, .notOAuth, .invalidResource: return .usage
        case .resourceNotSignedIn: return .notFound
        }
    }

    public var description: String {
        switch self {
        case .scopesNotGranted(let scopes, let account, let provider):
            let names = scopes.map { TerminalText.sanitized($0, maxLength: 60) }.joined(separator: " ")
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) was not granted \(names): --scope can only narrow the account's scopes; add them to scopes in the provider file and sign in again"
        case .notOAuth(let provider):
            return "\(provider) is a firebase provider: --resource and --scope need an OAuth provider's refresh grant"
        case .resourceNotSignedIn(let resource, let account, let provider):
            return
                "\(provider) refused a token for \(TerminalText.sanitized(resource, maxLength: 200)) (invalid_target): it gives one only for a resource the sign-in asked for; sign in again for it with `\(RefreshError.login(provider, account, "--resource", resource))`. The account was kept."
        case .invalidResource(let problem):
            return "resource: \(problem)"
        }
    }
}

extension AccountService {
    /// The access token handed on for `record`, an account just made valid: the account's own, or
    /// with `narrowing` one for that resource and those scopes, of that very account (not
    /// whichever one its provider's name would select), with when it expires. `interaction`
    /// signs the account in again when only a sign-in naming the resource can give that token;
    /// the account comes back as it then is (with a new DPoP key, say).
    public func accessToken(
        of record: AccountRecord, narrowing: TokenNarrowing?, minimumLifetime: TimeInterval,
        signingInWith interaction: (any SignInInteraction)? = nil
    ) async throws -> (token: Secret, expiresAt: Date?, record: AccountRecord) {
        guard let narrowing else { return (record.accessToken, record.expiresAt, record) }
        if let token = try await unkeptMachineToken(of: record, narrowing) { return (token, nil, record) }
        do {
            let token = try await narrowedToken(of: record, narrowing, minimumLifetime: minimumLifetime)
            return (token.accessToken, token.expiresAt, record)
        } catch {
            try await signInAgain(AccountSelector(provider: record.provider, account: record.subject), because: error, interaction)
            let current = try await validRecord(of: record, minimumLifetime: 0)
            let token = try await narrowedToken(of: current, narrowing, minimumLifetime: minimumLifetime)
            return (token.accessToken, token.expiresAt, current)
        }
    }

    /// Signs the account in again naming the resource when `error` is `resourceNotSignedIn` and
    /// someone is there to sign in; throws `error` otherwise.
    private func signInAgain(_ selector: AccountSelector, because error: any Error, _ interaction: (any SignInInteraction)?) async throws {
        guard case NarrowingError.resourceNotSignedIn(let resource, _, _) = error, let interaction else { throw error }
        try await signInAgain(selector, naming: resource, interaction, timeout: .seconds(300))
    }

    /// An access token for `narrowing` valid for at least `minimumLifetime` seconds: the one kept
    /// from an earlier call when it still is, else a new one from the account's refresh token,
    /// kept with the account (one per resource and scopes, at most `NarrowedToken.keptPerAccount`)
    /// along with a rotated refresh token. Single-flight under the keystore's lock, as `validRecord`.
    public func narrowedToken(for selector: AccountSelector, _ narrowing: TokenNarrowing, minimumLifetime: TimeInterval) async throws
        -> NarrowedToken
    {
        if let resource = narrowing.resource, let problem = ResourceIndicator.problem(resource) {
            throw NarrowingError.invalidResource(problem: problem)
        }
        let records = try await keystore.records()
        let selector = here?.selector(selector, among: records) ?? selector
        return try await narrowedToken(of: try selector.select(from: records), narrowing, minimumLifetime: minimumLifetime)
    }

    /// `narrowedToken(for:_:minimumLifetime:)` of the very account `record` is (by identity),
    /// whatever a selector naming it would pick.
    public func narrowedToken(of record: AccountRecord, _ narrowing: TokenNarrowing, minimumLifetime: TimeInterval) async throws
        -> NarrowedToken
    {
        if let kept = record.narrowedTokens?.first(where: narrowing.matches), kept.isValid(at: engine.now(), margin: minimumLifetime) {
            if kept.needsUseRecorded(at: engine.now()) { await recordUse(of: narrowing, by: record.identity) }
            return kept
        }
        let missing = narrowing.scopes.filter { !record.scopes.contains($0) }
        guard missing.isEmpty else { throw NarrowingError.scopesNotGranted(missing, account: record.label, provider: record.provider) }
        let provider = try catalog.provider(named: record.provider)
        let oauth: OAuthProvider
        switch provider.kind {
        case .oidc(let client), .oauth2(let client): oauth = try await withClientID(OAuthProvider(provider, client: client))
        case .firebase: throw NarrowingError.notOAuth(provider: provider.name)
        }
        let metadata = try await engine.metadata(for: oauth)
        return try await keystore.updateAccount(record.identity) { stored in
            guard let current = stored else { throw signedOutMeanwhile(record) }
            let kept = current.narrowedTokens?.first(where: narrowing.matches)
            if let kept, kept.isValid(at: engine.now(), margin: minimumLifetime) { return kept }
            let token: NarrowedToken
            let rotated: Secret?
            do {
                (token, rotated) = try await engine.narrowedToken(current, narrowing, provider: oauth, metadata: metadata)
            } catch let error as TokenEndpointError {
                guard error.isInvalidTarget, let resource = narrowing.resource else { throw error }
                throw NarrowingError.resourceNotSignedIn(resource, account: current.label, provider: provider.name)
            }
            stored?.refreshToken = rotated ?? current.refreshToken
            stored?.narrowedTokens = NarrowedToken.keeping(token, among: current.narrowedTokens ?? [], now: engine.now())
            return token
        }
    }

    /// Notes in the vault that the token kept for `narrowing` answered a call now, so it is among
    /// the last to go when the account keeps too many. Best effort: a use that cannot be written
    /// (the vault is busy or read-only) costs only that order.
    private func recordUse(of narrowing: TokenNarrowing, by account: AccountIdentity) async {
        let now = engine.now()
        _ = try? await keystore.updateAccount(account) { record in
            guard let position = record?.narrowedTokens?.firstIndex(where: narrowing.matches) else { return }
            record?.narrowedTokens?[position].lastUsedAt = now
        }
    }
}
