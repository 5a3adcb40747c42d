public import Foundation
public import LatchkeyCore
public import LatchkeyVault

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
    /// `client_id`: named on the device-code screen, so a person can tell whose request it is.
    public var clientID: String
    public var signIn: SignInSteps

    /// How a sign-in at a provider goes on the screen: the one place the screen learns what a
    /// provider's kind means (`init(_:)`), so keys and frames ask about steps, not kinds.
    public enum SignInSteps: Sendable, Equatable {
        /// The browser, paste or device screens (`oidc`, `oauth2`).
        case redirect(OAuthClient.RedirectMode)
        /// The second-factor screens (`firebase`): email and password first, or, with
        /// `first_factor = "provider:NAME"`, the browser screens of that provider; then a second
        /// factor. Its accounts can enroll a phone.
        case secondFactor(firstFactorProvider: String?)
    }

    public init(
        name: String, displayName: String, issuer: String?, redirectURITemplate: String, scopes: [String], clientID: String = "",
        signIn: SignInSteps
    ) {
        self.name = name
        self.displayName = displayName
        self.issuer = issuer
        self.redirectURITemplate = redirectURITemplate
        self.scopes = scopes
        self.clientID = clientID
        self.signIn = signIn
    }

    /// The redirect mode of a browser, paste or device sign-in; nil for the second-factor screens.
    public var redirectMode: OAuthClient.RedirectMode? {
        guard case .redirect(let mode) = signIn else { return nil }
        return mode
    }

    /// The OpenID provider whose sign-in is the first factor, if there is one.
    public var firstFactorProvider: String? {
        guard case .secondFactor(let name) = signIn else { return nil }
        return name
    }

    /// Accounts of this provider can enroll a phone as a second factor (`e`).
    public var enrollsPhones: Bool {
        guard case .secondFactor = signIn else { return false }
        return true
    }

    /// The detail pane's "Sign-in" line.
    var signInDescription: String {
        switch signIn {
        case .redirect(let mode): return mode.rawValue
        case .secondFactor(nil): return "email and password, then a second factor"
        case .secondFactor(let name?): return "a sign-in at \(name), then a second factor"
        }
    }

    public init(_ provider: Provider) {
        switch provider.kind {
        case .oidc(let client), .oauth2(let client):
            self.init(
                name: provider.name, displayName: provider.displayName, issuer: client.issuer,
                redirectURITemplate: provider.oauth?.redirectURITemplate ?? "", scopes: client.scopes, clientID: client.clientID,
                signIn: .redirect(client.redirectMode))
        case .firebase(let settings):
            var firstFactor: String?
            if case .provider(let name) = settings.firstFactor { firstFactor = name }
            self.init(
                name: provider.name, displayName: provider.displayName, issuer: settings.issuer, redirectURITemplate: "—", scopes: [],
                clientID: settings.projectID, signIn: .secondFactor(firstFactorProvider: firstFactor))
        }
    }
}
