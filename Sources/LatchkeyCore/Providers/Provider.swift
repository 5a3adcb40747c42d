public import Foundation

/// One identity provider, as configured by one file in a providers.d directory.
public struct Provider: Sendable, Equatable {
    /// Which protocol the provider speaks, which decides how the account is identified.
    public enum Kind: String, Sendable, CaseIterable {
        /// OpenID Connect: the account is the verified ID token's {iss, sub}.
        case oidc
        /// Plain OAuth 2.0: the account comes from the userinfo endpoint.
        case oauth2
    }

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

    /// The file stem; also the `PROVIDER` in `latchkey token PROVIDER`.
    public var name: String
    public var displayName: String
    public var kind: Kind
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
    /// For `oauth2` providers: the userinfo member identifying the account.
    public var accountIDField: String
    /// For `oauth2` providers: the userinfo member shown as the account's name.
    public var accountNameField: String
    /// The file the provider was read from.
    public var sourceFile: String
    /// For `kind = "firebase"` files: the Firebase settings (see `Provider.Firebase`); `nil` otherwise.
    ///
    /// Until `Kind` gains a `firebase` case, such providers carry `kind == .oidc` (their ID tokens
    /// are verified like OpenID ones) and are told apart by this property: `isFirebase`.
    public var firebase: Firebase? = nil

    /// Whether the provider signs in through Firebase Authentication (first and second factor).
    public var isFirebase: Bool { firebase != nil }

    /// The `kind` as written in the provider file.
    public var kindName: String { isFirebase ? "firebase" : kind.rawValue }

    /// The redirect URI for a listener on `port`: `http://127.0.0.1:PORT/oauth2redirect/NAME`.
    public func redirectURI(port: Int) -> String {
        "http://\(loopbackHost.rawValue):\(port)\(redirectPath)"
    }

    /// The redirect URI with the port left open, for listings.
    public var redirectURITemplate: String {
        "http://\(loopbackHost.rawValue):PORT\(redirectPath)"
    }
}
