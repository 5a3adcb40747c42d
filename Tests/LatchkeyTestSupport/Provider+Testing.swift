public import Foundation
public import LatchkeyProviders

extension Provider {
    /// An OpenID provider built by hand, so flow tests do not depend on the file parser.
    public static func testing(
        name: String = "example",
        issuer: String? = "https://idp.example.com",
        endpoints: OAuthClient.Endpoints = OAuthClient.Endpoints(
            authorization: URL(string: "https://idp.example.com/authorize"), token: URL(string: "https://idp.example.com/token"),
            jwks: URL(string: "https://idp.example.com/jwks")),
        scopes: [String] = ["openid", "email"],
        extraAuthorizationParameters: [String: String] = [:],
        redirectMode: OAuthClient.RedirectMode = .loopback,
        redirectPath: String? = nil,
        isOpenID: Bool = true,
        choices: ProtocolChoices = ProtocolChoices()
    ) -> Provider {
        let client = OAuthClient(
            issuer: issuer, endpoints: endpoints, clientID: "client-\(name)", scopes: scopes,
            extraAuthorizationParameters: extraAuthorizationParameters, redirectMode: redirectMode,
            redirectPath: redirectPath ?? "/oauth2redirect/\(name)", choices: choices)
        return Provider(
            name: name, displayName: name.capitalized, kind: isOpenID ? .oidc(client) : .oauth2(client),
            sourceFile: "/etc/latchkey/providers.d/\(name).toml")
    }

    /// A firebase provider built by hand.
    public static func firebaseTesting(name: String = "fb", settings: FirebaseSettings) -> Provider {
        Provider(name: name, displayName: "Emulated", kind: .firebase(settings), sourceFile: "/etc/latchkey/providers.d/\(name).toml")
    }
}

extension FirebaseProvider {
    /// `Provider.firebaseTesting(…)` as the firebase steps see it.
    public static func testing(name: String = "fb", settings: FirebaseSettings) -> FirebaseProvider {
        FirebaseProvider(Provider.firebaseTesting(name: name, settings: settings), settings: settings)
    }
}

extension OAuthProvider {
    /// `Provider.testing(…)` as the OAuth engine sees it.
    public static func testing(
        name: String = "example", issuer: String? = "https://idp.example.com",
        endpoints: OAuthClient.Endpoints = OAuthClient.Endpoints(
            authorization: URL(string: "https://idp.example.com/authorize"), token: URL(string: "https://idp.example.com/token"),
            jwks: URL(string: "https://idp.example.com/jwks")),
        scopes: [String] = ["openid", "email"], extraAuthorizationParameters: [String: String] = [:], redirectPath: String? = nil,
        isOpenID: Bool = true
    ) -> OAuthProvider {
        Provider.testing(
            name: name, issuer: issuer, endpoints: endpoints, scopes: scopes, extraAuthorizationParameters: extraAuthorizationParameters,
            redirectPath: redirectPath, isOpenID: isOpenID
        ).asOAuth
    }
}

extension Provider {
    /// This provider as the firebase steps see it; the test made it (or parsed it) as firebase.
    public var asFirebase: FirebaseProvider {
        guard case .firebase(let settings) = kind else { preconditionFailure("\(name) is not a firebase provider") }
        return FirebaseProvider(self, settings: settings)
    }

    /// This provider as the OAuth engine sees it; the test made it (or parsed it) as oidc or oauth2.
    public var asOAuth: OAuthProvider {
        switch kind {
        case .oidc(let client), .oauth2(let client): return OAuthProvider(self, client: client)
        case .firebase: preconditionFailure("\(name) is not an OAuth provider")
        }
    }
}

extension Provider {
    /// A provider file of kind `oidc` (the least a file needs), as a providers.d directory holds it.
    public static func oidcFile(_ displayName: String, redirectPath: String? = nil) -> String {
        var text = """
            display_name = "\(displayName)"
            kind = "oidc"
            issuer = "https://\(displayName.lowercased()).example.com"

            """
        if let redirectPath { text += "redirect_path = \"\(redirectPath)\"\n" }
        return text
    }
}
