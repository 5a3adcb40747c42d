public import Foundation
public import LatchkeyVault

/// What `latchkey token --resource/--scope` asks for instead of the account's own token.
public struct TokenNarrowing: Sendable, Equatable {
    /// `resource` (RFC 8707): the API the token is for.
    public var resource: String?
    /// The scopes, sorted and without repeats; empty for the account's own.
    public var scopes: [String]

    public init(resource: String?, scopes: [String]) {
        self.resource = resource
        self.scopes = Array(Set(scopes)).sorted()
    }

    func matches(_ token: NarrowedToken) -> Bool { token.resource == resource && token.scopes == scopes }
}

/// Why a narrower token cannot be had.
public enum NarrowingError: LatchkeyError, Equatable {
    /// Scopes the account was never granted: a refresh can only narrow (RFC 6749 §6).
    case scopesNotGranted([String], account: String, provider: String)
    /// A firebase provider has no refresh grant with resources or scopes.
    case notOAuth(provider: String)

    public var category: FailureCategory {
        .usage
    }

    public var description: String {
        switch self {
        case .scopesNotGranted(let scopes, let account, let provider):
            let names = scopes.map { TerminalText.sanitized($0, maxLength: 60) }.joined(separator: " ")
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) was not granted \(names): --scope can only narrow the account's scopes; add them to scopes in the provider file and sign in again"
        case .notOAuth(let provider):
            return "\(provider) is a firebase provider: --resource and --scope need an OAuth provider's refresh grant"
        }
    }
}

extension AccountService {
    /// The access token a command hands on for `record`, an account it has just made valid: the
    /// account's own, or with `narrowing` one for that resource and those scopes, of that very
    /// account (not whichever one its provider's name would select).
    public func accessToken(of record: AccountRecord, narrowing: TokenNarrowing?, minimumLifetime: TimeInterval) async throws
        -> Secret
    {
        guard let narrowing else { return record.accessToken }
        let account = AccountSelector(provider: record.provider, account: record.subject)
        return try await narrowedToken(for: account, narrowing, minimumLifetime: minimumLifetime).accessToken
    }

    /// An access token for `narrowing` valid for at least `minimumLifetime` seconds: the one kept
    /// from an earlier call when it still is, else a new one from the account's refresh token,
    /// kept with the account (one per resource and scopes) along with a rotated refresh token.
    /// Single-flight under the keystore's lock, as `validRecord`.
    public func narrowedToken(for selector: AccountSelector, _ narrowing: TokenNarrowing, minimumLifetime: TimeInterval) async throws
        -> NarrowedToken
    {
        let records = try await keystore.records()
        let selector = here?.selector(selector, among: records) ?? selector
        let record = try selector.select(from: records)
        if let kept = record.narrowedTokens?.first(where: narrowing.matches), kept.isValid(at: engine.now(), margin: minimumLifetime) {
            return kept
        }
        let missing = narrowing.scopes.filter { !record.scopes.contains($0) }
        guard missing.isEmpty else { throw NarrowingError.scopesNotGranted(missing, account: record.label, provider: record.provider) }
        let provider = try catalog.provider(named: selector.provider)
        let oauth: OAuthProvider
        switch provider.kind {
        case .oidc(let client), .oauth2(let client): oauth = try await withClientID(OAuthProvider(provider, client: client))
        case .firebase: throw NarrowingError.notOAuth(provider: provider.name)
        }
        let metadata = try await engine.metadata(for: oauth)
        return try await keystore.update { records in
            let index = try selector.index(in: records)
            let current = records[index]
            let kept = current.narrowedTokens?.first(where: narrowing.matches)
            if let kept, kept.isValid(at: engine.now(), margin: minimumLifetime) { return kept }
            let (token, rotated) = try await engine.narrowedToken(current, narrowing, provider: oauth, metadata: metadata)
            records[index].refreshToken = rotated ?? current.refreshToken
            records[index].narrowedTokens = (current.narrowedTokens ?? []).filter { !narrowing.matches($0) } + [token]
            return token
        }
    }
}
