public import Foundation

/// How an emulator instance behaves: its project, its users and the limits that make the
/// production-only errors (SESSION_EXPIRED, TOO_MANY_ATTEMPTS_TRY_LATER, QUOTA_EXCEEDED,
/// INVALID_MFA_PENDING_CREDENTIAL) reachable in tests.
public struct EmulatorConfiguration: Sendable, Codable, Equatable {
    /// `projectId`: the `aud` of ID tokens and the `{project}` of the emulator's own REST paths.
    public var projectID: String
    /// `apiKey`: when set, requests with another `key` get "API key not valid"; when `nil`,
    /// any non-empty key is accepted (as the Firebase emulator does).
    public var apiKey: String?
    /// `projectNumber`: returned as `project_id` by securetoken refresh.
    public var projectNumber: String
    /// `codeLifetime`: seconds an SMS code (and its `sessionInfo`) stays valid.
    public var codeLifetime: TimeInterval
    /// `pendingCredentialLifetime`: seconds an `mfaPendingCredential` stays valid.
    public var pendingCredentialLifetime: TimeInterval
    /// `maxCodeAttempts`: wrong codes accepted per session before TOO_MANY_ATTEMPTS_TRY_LATER.
    public var maxCodeAttempts: Int
    /// `smsQuota`: SMS sends allowed per `smsQuotaWindow` seconds before QUOTA_EXCEEDED.
    public var smsQuota: Int
    public var smsQuotaWindow: TimeInterval
    /// `tokenLifetime`: seconds until an ID token's `exp`.
    public var tokenLifetime: TimeInterval
    /// `maxFactors`: enrollments per user before SECOND_FACTOR_LIMIT_EXCEEDED.
    public var maxFactors: Int
    /// `requireAppVerification`: `mfaSignIn:start`/`mfaEnrollment:start` without reCAPTCHA fields
    /// get INVALID_APP_CREDENTIAL, as projects enforcing app verification answer.
    public var requireAppVerification: Bool
    /// `emailEnumerationProtection`: INVALID_LOGIN_CREDENTIALS instead of EMAIL_NOT_FOUND / INVALID_PASSWORD.
    public var emailEnumerationProtection: Bool
    public var users: [EmulatorUser]

    public init(
        projectID: String = "demo-latchkey", apiKey: String? = nil, projectNumber: String = "12345", codeLifetime: TimeInterval = 300,
        pendingCredentialLifetime: TimeInterval = 600, maxCodeAttempts: Int = 5, smsQuota: Int = 50, smsQuotaWindow: TimeInterval = 3600,
        tokenLifetime: TimeInterval = 3600, maxFactors: Int = 5, requireAppVerification: Bool = false,
        emailEnumerationProtection: Bool = true, users: [EmulatorUser] = []
    ) {
        self.projectID = projectID
        self.apiKey = apiKey
        self.projectNumber = projectNumber
        self.codeLifetime = codeLifetime
        self.pendingCredentialLifetime = pendingCredentialLifetime
        self.maxCodeAttempts = maxCodeAttempts
        self.smsQuota = smsQuota
        self.smsQuotaWindow = smsQuotaWindow
        self.tokenLifetime = tokenLifetime
        self.maxFactors = maxFactors
        self.requireAppVerification = requireAppVerification
        self.emailEnumerationProtection = emailEnumerationProtection
        self.users = users
    }

    enum CodingKeys: String, CodingKey {
        case projectID = "projectId"
        case apiKey, projectNumber, codeLifetime, pendingCredentialLifetime, maxCodeAttempts, smsQuota, smsQuotaWindow, tokenLifetime
        case maxFactors, requireAppVerification, emailEnumerationProtection, users
    }

    /// Reads a seed file; absent keys keep their defaults.
    public init(from decoder: any Decoder) throws {
        let defaults = EmulatorConfiguration()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        projectID = try container.decodeIfPresent(String.self, forKey: .projectID) ?? defaults.projectID
        apiKey = try container.decodeIfPresent(String.self, forKey: .apiKey)
        projectNumber = try container.decodeIfPresent(String.self, forKey: .projectNumber) ?? defaults.projectNumber
        codeLifetime = try container.decodeIfPresent(TimeInterval.self, forKey: .codeLifetime) ?? defaults.codeLifetime
        pendingCredentialLifetime =
            try container.decodeIfPresent(TimeInterval.self, forKey: .pendingCredentialLifetime) ?? defaults.pendingCredentialLifetime
        maxCodeAttempts = try container.decodeIfPresent(Int.self, forKey: .maxCodeAttempts) ?? defaults.maxCodeAttempts
        smsQuota = try container.decodeIfPresent(Int.self, forKey: .smsQuota) ?? defaults.smsQuota
        smsQuotaWindow = try container.decodeIfPresent(TimeInterval.self, forKey: .smsQuotaWindow) ?? defaults.smsQuotaWindow
        tokenLifetime = try container.decodeIfPresent(TimeInterval.self, forKey: .tokenLifetime) ?? defaults.tokenLifetime
        maxFactors = try container.decodeIfPresent(Int.self, forKey: .maxFactors) ?? defaults.maxFactors
        requireAppVerification = try container.decodeIfPresent(Bool.self, forKey: .requireAppVerification) ?? false
        emailEnumerationProtection = try container.decodeIfPresent(Bool.self, forKey: .emailEnumerationProtection) ?? true
        users = try container.decodeIfPresent([EmulatorUser].self, forKey: .users) ?? []
    }
}

/// A seeded account.
public struct EmulatorUser: Sendable, Codable, Equatable {
    /// A factor: `phoneInfo` (E.164) for SMS, or `totpSecret` (base32, RFC 6238) for an authenticator app.
    public struct Factor: Sendable, Codable, Equatable {
        public var mfaEnrollmentId: String
        public var displayName: String?
        public var phoneInfo: String?
        public var totpSecret: String?
        public var enrolledAt: String?

        public init(mfaEnrollmentId: String, displayName: String? = nil, phoneInfo: String? = nil, totpSecret: String? = nil) {
            self.mfaEnrollmentId = mfaEnrollmentId
            self.displayName = displayName
            self.phoneInfo = phoneInfo
            self.totpSecret = totpSecret
        }
    }

    /// An IdP identity that signs in through `accounts:signInWithIdp`: `providerId` and the
    /// IdP's `sub` as `rawId`.
    public struct FederatedIdentity: Sendable, Codable, Equatable {
        public var providerId: String
        public var rawId: String

        public init(providerId: String, rawId: String) {
            self.providerId = providerId
            self.rawId = rawId
        }
    }

    public var localId: String
    public var email: String
    public var password: String?
    public var emailVerified: Bool
    public var disabled: Bool
    public var displayName: String?
    public var mfaInfo: [Factor]
    public var federatedIdentities: [FederatedIdentity]

    public init(
        localId: String, email: String, password: String?, emailVerified: Bool = true, disabled: Bool = false,
        displayName: String? = nil, mfaInfo: [Factor] = [], federatedIdentities: [FederatedIdentity] = []
    ) {
        self.localId = localId
        self.email = email
        self.password = password
        self.emailVerified = emailVerified
        self.disabled = disabled
        self.displayName = displayName
        self.mfaInfo = mfaInfo
        self.federatedIdentities = federatedIdentities
    }

    enum CodingKeys: String, CodingKey {
        case localId, email, password, emailVerified, disabled, displayName, mfaInfo, federatedIdentities
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        localId = try container.decode(String.self, forKey: .localId)
        email = try container.decode(String.self, forKey: .email)
        password = try container.decodeIfPresent(String.self, forKey: .password)
        emailVerified = try container.decodeIfPresent(Bool.self, forKey: .emailVerified) ?? true
        disabled = try container.decodeIfPresent(Bool.self, forKey: .disabled) ?? false
        displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
        mfaInfo = try container.decodeIfPresent([Factor].self, forKey: .mfaInfo) ?? []
        federatedIdentities = try container.decodeIfPresent([FederatedIdentity].self, forKey: .federatedIdentities) ?? []
    }
}
