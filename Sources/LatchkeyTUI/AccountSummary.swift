public import Foundation
public import LatchkeyProviders
public import LatchkeyVault

/// One account as the screen knows it: who, where and until when. Never a token.
public struct AccountSummary: Sendable, Equatable {
    /// The account's identity, the same triple `AccountRecord.isSameAccount` compares.
    public typealias ID = AccountIdentity

    public var id: ID
    public var displayName: String?
    public var expiresAt: Date?
    public var scopes: [String]
    public var hasRefreshToken: Bool
    public var secondFactor: String?
    public var lastError: String?
    /// The account a bare provider name selects (`latchkey default`, `D` on the screen).
    public var isDefault: Bool
    /// config.toml maps its provider to it in the directory the screen runs in (`m`).
    public var appliesHere = false
    /// The AWS roles whose credentials are kept with the account (`aws-credential`) and when
    /// each expires, soonest first; never the keys.
    public var awsRoles: [AWSRole] = []

    /// One role's kept credentials as the detail pane shows them.
    public struct AWSRole: Sendable, Equatable {
        public var roleARN: String
        public var sessionName: String
        public var expiresAt: Date

        public init(roleARN: String, sessionName: String, expiresAt: Date) {
            self.roleARN = roleARN
            self.sessionName = sessionName
            self.expiresAt = expiresAt
        }
    }

    public init(
        id: ID, displayName: String?, expiresAt: Date?, scopes: [String], hasRefreshToken: Bool, secondFactor: String? = nil,
        lastError: String? = nil, isDefault: Bool = false
    ) {
        self.id = id
        self.displayName = displayName
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.hasRefreshToken = hasRefreshToken
        self.secondFactor = secondFactor
        self.lastError = lastError
        self.isDefault = isDefault
    }

    /// The record's identity and expiry; its tokens stay behind.
    public init(_ record: AccountRecord) {
        self.init(
            id: record.identity, displayName: record.displayName,
            expiresAt: record.expiresAt, scopes: record.scopes, hasRefreshToken: record.refreshToken != nil,
            secondFactor: record.secondFactor, lastError: record.lastError, isDefault: record.isDefault == true)
        awsRoles = (record.awsCredentials ?? []).sorted { $0.expiresAt < $1.expiresAt }.map {
            AWSRole(roleARN: $0.roleARN, sessionName: $0.sessionName, expiresAt: $0.expiresAt)
        }
    }

    /// What a person calls the account: its display name (usually the email), else its subject.
    public var label: String { displayName ?? id.subject }

    /// Names exactly this account for `AccountService` (the subject is unique at a provider).
    public var selector: AccountSelector { Self.selector(of: id) }

    static func selector(of id: ID) -> AccountSelector { AccountSelector(provider: id.provider, account: id.subject) }
}

/// One configured provider as the screen shows it.
public struct ProviderSummary: Sendable, Equatable {
    public var name: String
    public var displayName: String
    public var issuer: String?
    /// `nil` for a provider that receives no redirect (firebase).
    public var redirectURITemplate: String?
    public var scopes: [String]
    /// The detail pane's "Sign-in" line (`Provider.signInSummary`).
    public var signInSummary: String
    /// Accounts of this provider can enroll a phone as a second factor (`e`).
    public var enrollsPhones: Bool

    public init(
        name: String, displayName: String, issuer: String?, redirectURITemplate: String?, scopes: [String], signInSummary: String,
        enrollsPhones: Bool = false
    ) {
        self.name = name
        self.displayName = displayName
        self.issuer = issuer
        self.redirectURITemplate = redirectURITemplate
        self.scopes = scopes
        self.signInSummary = signInSummary
        self.enrollsPhones = enrollsPhones
    }

    public init(_ provider: Provider) {
        self.init(
            name: provider.name, displayName: provider.displayName, issuer: provider.issuer,
            redirectURITemplate: provider.redirectURITemplate, scopes: provider.scopes, signInSummary: provider.signInSummary,
            enrollsPhones: provider.enrollsPhones)
    }
}
