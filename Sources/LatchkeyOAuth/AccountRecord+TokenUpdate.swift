public import Foundation
public import LatchkeyVault

/// New tokens for an account that is already stored: from a refresh or a phone enrollment.
public struct TokenUpdate: Sendable, Equatable {
    public var accessToken: Secret
    public var tokenType: String
    /// `nil` keeps the refresh token the account has (RFC 6749 §6 lets a server not rotate).
    public var refreshToken: Secret?
    /// `nil` keeps the ID token the account has (plain OAuth 2.0 refreshes carry none).
    public var idToken: Secret?
    public var expiresAt: Date?
    /// `nil` keeps the scopes (a refresh response may omit `scope`).
    public var scopes: [String]?
    public var displayName: String?
    public var secondFactor: String?
    /// Whom the new tokens name (a new ID token's {iss, sub}, or what an exec plugin reported);
    /// `nil` when they name nobody, as a plain OAuth 2.0 refresh.
    public var identity: TokenSubject?

    public init(
        accessToken: Secret, tokenType: String, refreshToken: Secret?, idToken: Secret?, expiresAt: Date?, scopes: [String]? = nil,
        displayName: String? = nil, secondFactor: String? = nil, identity: TokenSubject? = nil
    ) {
        self.identity = identity
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.displayName = displayName
        self.secondFactor = secondFactor
    }
}

/// Whom tokens name within one provider: the pair of `AccountIdentity` a token response can
/// tell (an ID token's `iss` and `sub`).
public struct TokenSubject: Sendable, Equatable {
    public var issuer: String
    public var subject: String

    public init(issuer: String, subject: String) {
        self.issuer = issuer
        self.subject = subject
    }
}

extension AccountRecord {
    /// This account with `update` applied at `time`: the one place a stored account takes new
    /// tokens, so every kind keeps its refresh token, names and last error the same way, and
    /// tokens that name another account are refused the same way (OIDC Core §12.2).
    public func applying(_ update: TokenUpdate, at time: Date) throws(RefreshError) -> AccountRecord {
        if let identity = update.identity, identity != TokenSubject(issuer: issuer, subject: subject) {
            throw .identityChanged
        }
        var updated = self
        updated.accessToken = update.accessToken
        updated.tokenType = update.tokenType
        updated.refreshToken = update.refreshToken ?? refreshToken
        updated.idToken = update.idToken ?? idToken
        updated.expiresAt = Self.boundedExpiry(update.expiresAt, at: time)
        if let scopes = update.scopes { updated.scopes = scopes }
        if let displayName = update.displayName { updated.displayName = displayName }
        if let secondFactor = update.secondFactor { updated.secondFactor = secondFactor }
        updated.updatedAt = time
        updated.lastError = nil
        return updated
    }
}
