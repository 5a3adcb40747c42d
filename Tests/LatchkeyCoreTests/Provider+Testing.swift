import Foundation

@testable import LatchkeyCore

extension Provider {
    /// A provider built by hand, so flow tests do not depend on the file parser.
    static func testing(
        name: String = "example",
        kind: Kind = .oidc,
        issuer: String? = "https://idp.example.com",
        endpoints: Endpoints = Endpoints(
            authorization: URL(string: "https://idp.example.com/authorize"), token: URL(string: "https://idp.example.com/token"),
            jwks: URL(string: "https://idp.example.com/jwks")),
        scopes: [String] = ["openid", "email"],
        extraAuthorizationParameters: [String: String] = [:],
        redirectPath: String? = nil
    ) -> Provider {
        Provider(
            name: name, displayName: name.capitalized, kind: kind, issuer: issuer, endpoints: endpoints,
            clientID: "client-\(name)", clientSecret: nil, scopes: scopes, extraAuthorizationParameters: extraAuthorizationParameters,
            redirectMode: .loopback, loopbackHost: .ipv4, redirectPath: redirectPath ?? "/oauth2redirect/\(name)",
            accountIDField: "sub", accountNameField: "email", sourceFile: "/etc/latchkey/providers.d/\(name).toml")
    }
}
