public import FoundationEssentials
import LatchkeyEssentials

/// Everything Latchkey keeps about one signed-in account.
///
/// The identity is {provider, issuer, subject} from a verified ID token (or userinfo for plain
/// OAuth 2.0); `displayName` is only for people to read.
public struct AccountRecord: Codable, Sendable, Equatable {
    public var provider: String
    /// `iss` of the verified ID token, or the configured issuer / token endpoint for OAuth 2.0.
    public var issuer: String
    /// `sub` of the verified ID token, or the provider's account ID from userinfo.
    public var subject: String
    /// `email`, else `name`, else `preferred_username`: shown, never trusted.
    public var displayName: String?
    public var accessToken: Secret
    public var tokenType: String
    public var refreshToken: Secret?
    public var idToken: Secret?
    /// When the access token expires; `nil` when the provider did not say.
    public var expiresAt: Date?
    public var scopes: [String]
    /// The second factor used at sign-in (for example `phone`), when there was one.
    public var secondFactor: String?
    public var createdAt: Date
    public var updatedAt: Date
    /// The last refresh failure, kept so the screen and `status` can show it.
    public var lastError: String?
    /// `true` for the account a bare `PROVIDER` selects when the provider has several
    /// (`latchkey default`); optional so vaults written before it decode unchanged.
    public var isDefault: Bool?
    /// The private DPoP key the tokens are bound to (RFC 9449), base64url; `nil` for bearer tokens.
    public var dpopKey: Secret?
    /// Tokens for one resource or fewer scopes (`latchkey token --resource/--scope`), one per
    /// (resource, scopes); `nil` when none was asked for.
    public var narrowedTokens: [NarrowedToken]?
    /// AWS credentials `latchkey aws-credential` got with the ID token, at most
    /// `AWSRoleCredential.keptPerAccount`; `nil` when none was asked for (and in older vaults).
    public var awsCredentials: [AWSRoleCredential]?

    public init(
        provider: String, issuer: String, subject: String, displayName: String?, accessToken: Secret, tokenType: String,
        refreshToken: Secret?, idToken: Secret?, expiresAt: Date?, scopes: [String], secondFactor: String? = nil,
        createdAt: Date, updatedAt: Date, lastError: String? = nil
    ) {
        self.provider = provider
        self.issuer = issuer
        self.subject = subject
        self.displayName = displayName
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.secondFactor = secondFactor
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.lastError = lastError
    }

    /// Whether `other` is the same account (same verified identity at the same provider).
    public func isSameAccount(as other: AccountRecord) -> Bool {
        identity == other.identity
    }

    /// Which account this is, whatever its tokens: what `Keystore.updateAccount` is keyed by.
    public var identity: AccountIdentity { AccountIdentity(provider: provider, issuer: issuer, subject: subject) }

    /// How a person names this account on the command line: its display name, else its subject.
    public var label: String { displayName ?? subject }

    /// Whether `selector` (from `PROVIDER:ACCOUNT`) names this account.
    public func matches(selector: String) -> Bool {
        selector == subject || selector == displayName
    }

    /// Whether the tokens are bound to a DPoP key: the server said so (`token_type` DPoP,
    /// RFC 9449 §5), or Latchkey holds a key for them.
    public var isProofBound: Bool { dpopKey != nil || tokenType.lowercased() == "dpop" }

    /// Whether the access token is still valid `margin` seconds from `now`, by `TokenValidity`'s
    /// rule (the margin capped at half the lifetime from `updatedAt`, when the token was issued),
    /// on whole seconds as the launcher applies it to the token copies; a token without an expiry
    /// always is.
    public func isValid(at now: Date, margin: TimeInterval) -> Bool {
        guard let expiresAt else { return true }
        return TokenValidity.isValid(
            issuedAt: Int(wholeSeconds: updatedAt.timeIntervalSince1970), expiresAt: Int(wholeSeconds: expiresAt.timeIntervalSince1970),
            now: Int(wholeSeconds: now.timeIntervalSince1970), margin: Int(wholeSeconds: margin))
    }
}

/// One account's verified identity at one provider: the record's key in every keystore, as
/// display names may change and may collide.
public struct AccountIdentity: Sendable, Hashable {
    public var provider: String
    public var issuer: String
    public var subject: String

    public init(provider: String, issuer: String, subject: String) {
        self.provider = provider
        self.issuer = issuer
        self.subject = subject
    }
}
