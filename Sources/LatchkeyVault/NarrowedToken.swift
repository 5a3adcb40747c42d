public import FoundationEssentials
import LatchkeyEssentials

/// An access token for one resource (RFC 8707) or fewer scopes than the account's, got with the
/// account's refresh token for `latchkey token --resource/--scope` and kept with the account so
/// the next call asking the same is answered without the provider.
public struct NarrowedToken: Codable, Sendable, Equatable {
    /// `resource`, when one was asked for.
    public var resource: String?
    /// The scopes asked for, sorted; empty when only a resource was.
    public var scopes: [String]
    public var accessToken: Secret
    public var tokenType: String
    public var expiresAt: Date?
    /// When it was issued: the validity margin is capped at half the lifetime from here.
    public var issuedAt: Date

    public init(resource: String?, scopes: [String], accessToken: Secret, tokenType: String, expiresAt: Date?, issuedAt: Date) {
        self.resource = resource
        self.scopes = scopes
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
    }

    /// Whether it is still valid `margin` seconds from `now`, by the rule of
    /// `AccountRecord.isValid`.
    public func isValid(at now: Date, margin: TimeInterval) -> Bool {
        guard let expiresAt else { return true }
        return TokenValidity.isValid(
            issuedAt: Int(wholeSeconds: issuedAt.timeIntervalSince1970), expiresAt: Int(wholeSeconds: expiresAt.timeIntervalSince1970),
            now: Int(wholeSeconds: now.timeIntervalSince1970), margin: Int(wholeSeconds: margin))
    }
}

/// What `latchkey token --resource/--scope` asks for instead of the account's own token; also
/// what names a narrowed token's copy, so the launcher reads the options as the full command does.
public struct TokenNarrowing: Sendable, Equatable {
    /// `resource` (RFC 8707): the API the token is for.
    public var resource: String?
    /// The scopes, sorted and without repeats; empty for the account's own.
    public var scopes: [String]

    public init(resource: String?, scopes: [String]) {
        self.resource = resource
        self.scopes = Array(Set(scopes)).sorted()
    }

    /// `--scope`'s value as the full command splits it: words between spaces.
    public static func scopes(_ option: String) -> [String] {
        option.split(separator: " ").map(String.init)
    }

    public func matches(_ token: NarrowedToken) -> Bool { token.resource == resource && token.scopes == scopes }
}
