public import FoundationEssentials

/// Short-lived AWS credentials for one role, got from STS `AssumeRoleWithWebIdentity` with the
/// account's ID token and kept with the account, so that the AWS CLI, which runs
/// `latchkey aws-credential` before every call, asks STS once per credentials' life.
///
/// Kept per (role, session name, STS endpoint): credentials from a test endpoint never answer
/// for the real one, and a session name is part of who the credentials say the caller is.
public struct AWSRoleCredential: Codable, Sendable, Equatable, KeptPerAccount {
    public var roleARN: String
    public var sessionName: String
    /// The STS endpoint that issued them, as it was asked.
    public var endpoint: String
    public var accessKeyID: String
    public var secretAccessKey: Secret
    public var sessionToken: Secret
    /// STS's `Expiration`.
    public var expiresAt: Date
    public var issuedAt: Date
    /// When the vault last answered with them, to within `NarrowedToken.useGranularity`; `nil`
    /// for never since they were issued.
    public var lastUsedAt: Date?

    public init(
        roleARN: String, sessionName: String, endpoint: String, accessKeyID: String, secretAccessKey: Secret, sessionToken: Secret,
        expiresAt: Date, issuedAt: Date, lastUsedAt: Date? = nil
    ) {
        self.roleARN = roleARN
        self.sessionName = sessionName
        self.endpoint = endpoint
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.lastUsedAt = lastUsedAt
    }

    /// The most roles one account keeps credentials for: each is about 1.5 KB of the vault, and a
    /// person switches between a handful of roles; the bound keeps a caller asking for ever new
    /// roles from growing the vault.
    public static let keptPerAccount = 16

    /// How long before `Expiration` they stop being handed out: the AWS CLI and SDKs refresh
    /// credentials that expire within 15 minutes of a call and refuse ones expiring within a
    /// minute or two, so five minutes leaves a long command time to finish with them.
    public static let margin: TimeInterval = 300

    /// Whether they are the ones kept for `roleARN` as `sessionName` at `endpoint`.
    public func isFor(roleARN: String, sessionName: String, endpoint: String) -> Bool {
        self.roleARN == roleARN && self.sessionName == sessionName && self.endpoint == endpoint
    }

    /// Whether they may still be handed out at `now` (more than `margin` before `Expiration`).
    public func isUsable(at now: Date) -> Bool { expiresAt.timeIntervalSince(now) > Self.margin }

    /// When they were last issued or answered with: what "least recently used" orders by.
    public var lastUse: Date { max(issuedAt, lastUsedAt ?? issuedAt) }

    public func isSameKind(as other: AWSRoleCredential) -> Bool {
        isFor(roleARN: other.roleARN, sessionName: other.sessionName, endpoint: other.endpoint)
    }
}
