public import FoundationEssentials
import LatchkeyEssentials

/// An access token for one resource (RFC 8707) or fewer scopes than the account's, got with the
/// account's refresh token for `latchkey token --resource/--scope` and kept with the account so
/// the next call asking the same is answered without the provider.
public struct NarrowedToken: Codable, Sendable, Equatable, KeptPerAccount {
    /// `resource`, when one was asked for.
    public var resource: String?
    /// The scopes asked for, sorted; empty when only a resource was.
    public var scopes: [String]
    public var accessToken: Secret
    public var tokenType: String
    public var expiresAt: Date?
    /// When it was issued: the validity margin is capped at half the lifetime from here.
    public var issuedAt: Date
    /// When the vault last answered with it, to within `useGranularity`; `nil` for never since it
    /// was issued (and in vaults written before it was kept).
    public var lastUsedAt: Date?

    public init(
        resource: String?, scopes: [String], accessToken: Secret, tokenType: String, expiresAt: Date?, issuedAt: Date,
        lastUsedAt: Date? = nil
    ) {
        self.resource = resource
        self.scopes = scopes
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.lastUsedAt = lastUsedAt
    }

    /// The most narrowed tokens one account keeps. Each distinct (resource, scopes) asked for is a
    /// token kept in the vault and a copy in the kernel keyring, and a forwarded host chooses what
    /// it asks: without a bound, asking for ever new resources grows the vault until the 64 MiB cap
    /// refuses all of it. 16 is several times what a person uses (a provider file's `resources`
    /// and `git_resource`, each with a scope set or two), and 16 tokens with resources of at most
    /// `ResourceIndicator.maximumLength` keep an account's share under 40 KB of a vault file that
    /// is about 1.5 KB an account without them.
    public static let keptPerAccount = 16

    /// How stale `lastUsedAt` may get before a use is written to the vault: recording every use
    /// would write the vault on every call the vault answers, and recency to the hour is all that
    /// choosing which token to drop needs (as `relatime` does for file access times).
    public static let useGranularity: TimeInterval = 3600

    /// When it was last issued or answered with: what "least recently used" orders by.
    public var lastUse: Date { max(issuedAt, lastUsedAt ?? issuedAt) }

    /// Whether the vault should record a use at `now`: the one recorded is older than `useGranularity`.
    public func needsUseRecorded(at now: Date) -> Bool { now.timeIntervalSince(lastUse) >= Self.useGranularity }

    public func isSameKind(as other: NarrowedToken) -> Bool { resource == other.resource && scopes == other.scopes }

    public func isUsable(at now: Date) -> Bool { isValid(at: now, margin: 0) }

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
