public import Foundation

extension Provider {
    /// The `providerId` Identity Platform knows this OpenID provider by when its ID token is the
    /// first factor of a firebase sign-in (`signInWithIdp`): `google.com` for Google, else
    /// `oidc.NAME`, the ID given to the provider when it was added to the Firebase project.
    public var firebaseProviderID: String {
        issuer == "https://accounts.google.com" ? "google.com" : "oidc.\(name)"
    }

    /// The settings of a `kind = "firebase"` provider (Firebase Authentication / Identity Platform).
    ///
    /// Such a provider is also an OpenID-style issuer: `issuer` is `https://securetoken.google.com/<project>`,
    /// `client_id` the project ID (the `aud` of its ID tokens) and `jwks_uri` Google's securetoken keys,
    /// so ID tokens are verified by the same `IDTokenVerifier` as every other provider's.
    public struct Firebase: Sendable, Equatable {
        /// Where the first factor comes from (`first_factor`).
        public enum FirstFactorSource: Sendable, Equatable {
            /// `"password"`: email and password.
            case password
            /// `"provider:<name>"`: an ID token from that OpenID provider in providers.d.
            case provider(String)
        }

        /// Who runs the second factor (`mfa_backend`).
        public enum Backend: Sendable, Equatable {
            /// `"firebase"`: the Identity Toolkit REST API.
            case firebase
            /// `"exec:/path"`: an external program speaking latchkey-mfa-plugin(7).
            case exec(path: String)
        }

        /// `api_key`: the Web API key, sent as the `key` query parameter. Not a secret (it ships in apps).
        public var apiKey: String
        /// `project_id`
        public var projectID: String
        public var firstFactor: FirstFactorSource
        /// `identitytoolkit_url`: `https://identitytoolkit.googleapis.com`, or an emulator's
        /// `http://127.0.0.1:PORT/identitytoolkit.googleapis.com`.
        public var identityToolkitURL: URL
        /// `securetoken_url`: `https://securetoken.googleapis.com` (the token endpoint is `/v1/token`).
        public var secureTokenURL: URL
        /// `jwks_uri`: the keys that sign the project's ID tokens.
        public var jwksURL: URL
        public var mfaBackend: Backend

        public static let defaultIdentityToolkitURL = URL(string: "https://identitytoolkit.googleapis.com")!
        public static let defaultSecureTokenURL = URL(string: "https://securetoken.googleapis.com")!
        public static let defaultJWKSURL = URL(
            string: "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com")!

        public init(
            apiKey: String, projectID: String, firstFactor: FirstFactorSource = .password,
            identityToolkitURL: URL = defaultIdentityToolkitURL, secureTokenURL: URL = defaultSecureTokenURL,
            jwksURL: URL = defaultJWKSURL, mfaBackend: Backend = .firebase
        ) {
            self.apiKey = apiKey
            self.projectID = projectID
            self.firstFactor = firstFactor
            self.identityToolkitURL = identityToolkitURL
            self.secureTokenURL = secureTokenURL
            self.jwksURL = jwksURL
            self.mfaBackend = mfaBackend
        }

        /// `iss` of the project's ID tokens.
        public var issuer: String { "https://securetoken.google.com/\(projectID)" }

        /// The securetoken refresh endpoint.
        public var tokenEndpoint: URL { Self.url(secureTokenURL, "v1/token") }

        /// `base` + `/` + `path`, keeping the colons of `accounts:signInWithPassword` as they are.
        static func url(_ base: URL, _ path: String) -> URL {
            var text = base.absoluteString
            while text.hasSuffix("/") { text.removeLast() }
            return URL(string: text + "/" + path) ?? base
        }
    }

    /// A provider of kind firebase, shaped so the OpenID parts of Latchkey (ID token verification,
    /// metadata without discovery) work on it unchanged.
    public static func firebase(
        name: String, displayName: String, settings: Firebase, redirectPath: String? = nil, sourceFile: String
    ) -> Provider {
        Provider(
            name: name, displayName: displayName, kind: .oidc, issuer: settings.issuer,
            endpoints: Endpoints(authorization: settings.identityToolkitURL, token: settings.tokenEndpoint, jwks: settings.jwksURL),
            clientID: settings.projectID, clientSecret: nil, scopes: [], extraAuthorizationParameters: [:], redirectMode: .loopback,
            loopbackHost: .ipv4, redirectPath: redirectPath ?? "/oauth2redirect/\(name)", accountIDField: "sub",
            accountNameField: "email", sourceFile: sourceFile, firebase: settings)
    }
}
