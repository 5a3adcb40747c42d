public import Foundation
public import LatchkeyCore

/// One account as the screen knows it: who, where and until when. Never a token.
public struct AccountSummary: Sendable, Equatable {
    /// The account's identity, the same triple `AccountRecord.isSameAccount` compares.
    public struct ID: Sendable, Hashable {
        public var provider: String
        public var issuer: String
        public var subject: String

        public init(provider: String, issuer: String, subject: String) {
            self.provider = provider
            self.issuer = issuer
            self.subject = subject
        }
    }

    public var id: ID
    public var displayName: String?
    public var expiresAt: Date?
    public var scopes: [String]
    public var hasRefreshToken: Bool
    public var secondFactor: String?
    public var lastError: String?
    /// The account a bare provider name selects (`latchkey default`, `D` on the screen).
    public var isDefault: Bool

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
            id: ID(provider: record.provider, issuer: record.issuer, subject: record.subject), displayName: record.displayName,
            expiresAt: record.expiresAt, scopes: record.scopes, hasRefreshToken: record.refreshToken != nil,
            secondFactor: record.secondFactor, lastError: record.lastError, isDefault: record.isDefault == true)
    }

    /// What a person calls the account: its display name (usually the email), else its subject.
    public var label: String { displayName ?? id.subject }

    /// Names exactly this account for `AccountService` (the subject is unique at a provider).
    public var selector: AccountSelector { AccountSelector(provider: id.provider, account: id.subject) }
}

/// One configured provider as the screen shows it.
public struct ProviderSummary: Sendable, Equatable {
    public var name: String
    public var displayName: String
    public var issuer: String?
    public var redirectURITemplate: String
    public var scopes: [String]
    public var redirectMode: OAuthClient.RedirectMode
    /// `client_id`: named on the device-code screen, so a person can tell whose request it is.
    public var clientID: String
    /// A `kind = "firebase"` provider: a first factor, then a second factor, in the screen.
    public var isFirebase: Bool
    /// `first_factor = "provider:NAME"`: the OpenID provider whose sign-in is this firebase
    /// provider's first factor (nil: email and password).
    public var firstFactorProvider: String?

    public init(
        name: String, displayName: String, issuer: String?, redirectURITemplate: String, scopes: [String],
        redirectMode: OAuthClient.RedirectMode, clientID: String = "", isFirebase: Bool = false, firstFactorProvider: String? = nil
    ) {
        self.name = name
        self.displayName = displayName
        self.issuer = issuer
        self.redirectURITemplate = redirectURITemplate
        self.scopes = scopes
        self.redirectMode = redirectMode
        self.clientID = clientID
        self.isFirebase = isFirebase
        self.firstFactorProvider = firstFactorProvider
    }

    public init(_ provider: Provider) {
        switch provider.kind {
        case .oidc(let client), .oauth2(let client):
            self.init(
                name: provider.name, displayName: provider.displayName, issuer: client.issuer,
                redirectURITemplate: provider.oauth?.redirectURITemplate ?? "", scopes: client.scopes, redirectMode: client.redirectMode,
                clientID: client.clientID)
        case .firebase(let settings):
            var firstFactor: String?
            if case .provider(let name) = settings.firstFactor { firstFactor = name }
            self.init(
                name: provider.name, displayName: provider.displayName, issuer: settings.issuer, redirectURITemplate: "—", scopes: [],
                redirectMode: .loopback, clientID: settings.projectID, isFirebase: true, firstFactorProvider: firstFactor)
        }
    }
}
