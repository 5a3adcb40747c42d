public import Foundation
public import LatchkeyVault

/// One identity provider, as configured by one file in a providers.d directory.
///
/// What is common to every kind sits here; what a kind needs to sign in sits in `Kind`'s
/// associated configuration, so no kind carries fields it does not use.
public struct Provider: Sendable, Equatable {
    /// The protocol the provider speaks, with the configuration that protocol needs.
    public enum Kind: Sendable, Equatable {
        /// OpenID Connect: the account is the verified ID token's {iss, sub}.
        case oidc(OAuthClient)
        /// Plain OAuth 2.0: the account comes from the userinfo endpoint.
        case oauth2(OAuthClient)
        /// Firebase Authentication / Identity Platform: a first factor, then an optional second.
        case firebase(FirebaseSettings)
    }

    /// The file stem; also the `PROVIDER` in `latchkey token PROVIDER`.
    public var name: String
    public var displayName: String
    public var kind: Kind
    /// The file the provider was read from.
    public var sourceFile: String
    /// `forward` and `confirm`: what `latchkey agent` may do with every account of this provider
    /// (an account's own `[accounts."…"]` table in config.toml overrides it).
    public var sharing = AccountSharing()
    /// `aws_role_arn`, `aws_region`, `aws_sts_endpoint` and `aws_web_identity_token`: what
    /// `latchkey aws-credential` uses where its options say nothing.
    public var aws = AWSSettings()
    /// `openbao_address`: the OpenBao `latchkey openbao-token` logs in to with this provider's
    /// ID tokens when it is given no `--address`.
    public var openBaoAddress: URL?
    /// `gcp_audience`: the Google identity pool provider `latchkey gcp-config` names when it is
    /// given no `--audience`.
    public var googleAudience: String?
    /// `forward_id_token = true`: a forwarded host may hold the account's identity token even
    /// where the file lists clouds that take it (`identityClouds`).
    public var forwardsIdentityToken = false

    public init(name: String, displayName: String, kind: Kind, sourceFile: String) {
        self.name = name
        self.displayName = displayName
        self.kind = kind
        self.sourceFile = sourceFile
    }

    /// The `kind` as written in the provider file (and printed by `providers`).
    public var kindName: String {
        switch kind {
        case .oidc: return "oidc"
        case .oauth2: return "oauth2"
        case .firebase: return "firebase"
        }
    }

    /// The values `kind` may take in a provider file.
    static let kindNames = ["oidc", "oauth2", "firebase"]

    /// Whether `name` can name a provider or a preset: letters, digits, `.`, `_` and `-` (the
    /// file name without `.toml`). Nothing a shell, a terminal or a path would read specially,
    /// so names can be completed on Tab and printed as they are.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.hasPrefix("-")
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }
}

/// How an OAuth 2.0 client is registered at its authorization server: the part of a provider
/// file that `oidc` and `oauth2` share.
public struct OAuthClient: Sendable, Equatable {
    /// How the authorization response reaches Latchkey.
    public enum RedirectMode: String, Sendable, CaseIterable {
        /// A listener on the loopback interface (RFC 8252 §7.3).
        case loopback
        /// The person pastes the final redirect URL from the browser's address bar.
        case paste
        /// RFC 8628 device authorization grant: no redirect at all.
        case device
    }

    /// The host written into the loopback redirect URI.
    public enum LoopbackHost: String, Sendable, CaseIterable {
        case ipv4 = "127.0.0.1"
        case ipv6 = "[::1]"
        /// Only for providers that refuse IP literals (Microsoft Entra ID): RFC 8252 §8.3 prefers them.
        case localhost
    }

    /// Endpoints given explicitly in the file; each overrides what discovery finds.
    public struct Endpoints: Sendable, Equatable {
        public var authorization: URL?
        public var token: URL?
        public var revocation: URL?
        public var deviceAuthorization: URL?
        public var userinfo: URL?
        public var jwks: URL?

        public init(
            authorization: URL? = nil, token: URL? = nil, revocation: URL? = nil,
            deviceAuthorization: URL? = nil, userinfo: URL? = nil, jwks: URL? = nil
        ) {
            self.authorization = authorization
            self.token = token
            self.revocation = revocation
            self.deviceAuthorization = deviceAuthorization
            self.userinfo = userinfo
            self.jwks = jwks
        }
    }

    /// The issuer identifier; discovery is read from it and `iss` values must equal it exactly.
    public var issuer: String?
    public var endpoints: Endpoints
    public var clientID: String
    /// Some providers give native clients a secret that is not secret (RFC 8252 §8.5); sent when set.
    public var clientSecret: Secret?
    public var scopes: [String]
    /// Extra authorization request parameters such as `prompt` or `login_hint`, sorted by name.
    public var extraAuthorizationParameters: [String: String]
    public var redirectMode: RedirectMode
    public var loopbackHost: LoopbackHost
    /// This provider's own redirect path: the mix-up defence rests on it being unique.
    public var redirectPath: String
    /// `loopback_port`: the registered ports to listen on, first free wins; empty for any free
    /// port (RFC 8252 §7.3). For providers that accept only exactly registered redirect URIs.
    public var loopbackPorts: [Int]
    /// The userinfo members naming the account: always for `oauth2`, and for an `oidc` device
    /// sign-in that returns no ID token.
    public var accountFields: UserinfoAccountFields
    /// `git_hosts`: the hosts whose git remotes `latchkey git-credential` answers with this
    /// provider's access token.
    public var gitHosts: [GitHost]
    /// `git_username`: the user name sent to git with the token (GitLab wants `oauth2`).
    public var gitUsername: String
    /// `registry_hosts`: the container registries whose credential helper requests
    /// `docker-credential-latchkey` answers with this provider's access token.
    public var registryHosts: [GitHost]
    /// `registry_username`: the user name sent with the token; `<token>` sends it as an identity
    /// token instead of a password.
    public var registryUsername: String
    /// `par`, `dpop` and `resources` (`ProtocolChoices`).
    public var choices: ProtocolChoices

    public init(
        issuer: String?, endpoints: Endpoints, clientID: String, clientSecret: Secret? = nil, scopes: [String],
        extraAuthorizationParameters: [String: String] = [:], redirectMode: RedirectMode = .loopback, loopbackHost: LoopbackHost = .ipv4,
        redirectPath: String, loopbackPorts: [Int] = [], accountFields: UserinfoAccountFields = UserinfoAccountFields(),
        gitHosts: [GitHost] = [], gitUsername: String = OAuthClient.defaultGitUsername, registryHosts: [GitHost] = [],
        registryUsername: String = OAuthClient.defaultRegistryUsername, choices: ProtocolChoices = ProtocolChoices()
    ) {
        self.choices = choices
        self.issuer = issuer
        self.endpoints = endpoints
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.extraAuthorizationParameters = extraAuthorizationParameters
        self.redirectMode = redirectMode
        self.loopbackHost = loopbackHost
        self.redirectPath = redirectPath
        self.loopbackPorts = loopbackPorts
        self.accountFields = accountFields
        self.gitHosts = gitHosts
        self.gitUsername = gitUsername
        self.registryHosts = registryHosts
        self.registryUsername = registryUsername
    }

    /// The user name git gets with a token when the file sets no `git_username`.
    public static let defaultGitUsername = "oauth2"

    /// The user name a registry gets with a token when the file sets no `registry_username`: the
    /// one Google's registries take with an OAuth access token as the password.
    public static let defaultRegistryUsername = "oauth2accesstoken"
}

/// The userinfo members that identify and name an account (`account_id_field`, `account_name_field`).
public struct UserinfoAccountFields: Sendable, Equatable {
    /// `account_id_field`: the member identifying the account (default `sub`).
    public var id: String
    /// `account_name_field`: the member shown as the account's name (default `email`).
    public var name: String

    public init(id: String = "sub", name: String = "email") {
        self.id = id
        self.name = name
    }
}

/// An `oidc` or `oauth2` provider as the OAuth engine needs it: its names and its client
/// registration. Made from a provider whose kind was matched as one of those two, so nothing
/// reaches for a client a provider does not have.
///
/// Client fields read through (`provider.clientID`), so the engine reads like the RFCs.
@dynamicMemberLookup
public struct OAuthProvider: Sendable, Equatable {
    public var name: String
    public var displayName: String
    public var sourceFile: String
    public var client: OAuthClient
    /// Kind `oidc`: the account is the verified ID token's {iss, sub}, requests carry a `nonce`,
    /// and discovery is OpenID's. Kind `oauth2`: the account comes from the userinfo endpoint.
    public var isOpenID: Bool

    /// `provider`, whose kind is `oidc` or `oauth2` with `client`.
    public init(_ provider: Provider, client: OAuthClient) {
        name = provider.name
        displayName = provider.displayName
        sourceFile = provider.sourceFile
        self.client = client
        if case .oidc = provider.kind { isOpenID = true } else { isOpenID = false }
    }

    public subscript<Value>(dynamicMember keyPath: KeyPath<OAuthClient, Value>) -> Value { client[keyPath: keyPath] }

    /// The redirect URI for a listener on `port`: `http://127.0.0.1:PORT/oauth2redirect/NAME`.
    public func redirectURI(port: Int) -> String {
        "http://\(client.loopbackHost.rawValue):\(port)\(client.redirectPath)"
    }

    /// The `providerId` Identity Platform knows this provider by when its ID token is the first
    /// factor of a firebase sign-in (`signInWithIdp`): `google.com` for Google, else `oidc.NAME`,
    /// the ID given to the provider when it was added to the Firebase project.
    public var firebaseProviderID: String {
        client.issuer == "https://accounts.google.com" ? "google.com" : "oidc.\(name)"
    }
}

extension OAuthClient {
    /// The redirect URI with the port left open (or the registered ports), for listings.
    public var redirectURITemplate: String {
        let port = loopbackPorts.isEmpty ? "PORT" : loopbackPorts.map(String.init).joined(separator: "|")
        return "http://\(loopbackHost.rawValue):\(port)\(redirectPath)"
    }
}
