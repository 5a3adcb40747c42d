public import FoundationEssentials
public import LatchkeyVault

/// What an AWS `credential_process` prints: the documented JSON, version 1. Here, beside
/// `ReportJSON`, because the launcher prints it too when the agent answers `aws-credential`.
public struct AWSProcessCredential: Encodable, Sendable {
    let accessKeyID: String
    let secretAccessKey: Secret
    let sessionToken: Secret
    let expiresAt: Date

    public init(accessKeyID: String, secretAccessKey: Secret, sessionToken: Secret, expiresAt: Date) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiresAt = expiresAt
    }

    /// The credentials as the broker released them.
    public init(_ release: AWSRelease) {
        self.init(
            accessKeyID: release.accessKeyID, secretAccessKey: release.secretAccessKey, sessionToken: release.sessionToken,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(release.expiration)))
    }

    public init(_ credential: AWSRoleCredential) {
        self.init(
            accessKeyID: credential.accessKeyID, secretAccessKey: credential.secretAccessKey, sessionToken: credential.sessionToken,
            expiresAt: credential.expiresAt)
    }

    private enum CodingKeys: String, CodingKey {
        case version = "Version", accessKeyID = "AccessKeyId", secretAccessKey = "SecretAccessKey", sessionToken = "SessionToken"
        case expiration = "Expiration"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(1, forKey: .version)
        try container.encode(accessKeyID, forKey: .accessKeyID)
        try container.encode(secretAccessKey.exposedValue, forKey: .secretAccessKey)
        try container.encode(sessionToken.exposedValue, forKey: .sessionToken)
        try container.encode(expiresAt.formatted(.iso8601), forKey: .expiration)
    }
}
