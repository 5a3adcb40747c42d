import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("Authorization responses (RFC 6749 §4.1.2, RFC 9207, RFC 8252 §8.10)")
struct AuthorizationResponseTests {
    static let port = 53_682

    static func metadata(issuer: String? = "https://idp.example.com", requiresIssuerParameter: Bool = false) -> ServerMetadata {
        ServerMetadata(
            issuer: issuer, authorizationEndpoint: URL(string: "https://idp.example.com/authorize")!,
            tokenEndpoint: URL(string: "https://idp.example.com/token")!, jwksURI: URL(string: "https://idp.example.com/jwks"),
            requiresIssuerParameter: requiresIssuerParameter)
    }

    static func pending(
        provider: OAuthProvider = .testing(name: "example"), requiresIssuerParameter: Bool = false
    ) -> PendingAuthorization {
        PendingAuthorization(
            provider: provider, metadata: metadata(issuer: provider.issuer, requiresIssuerParameter: requiresIssuerParameter),
            redirectURI: provider.redirectURI(port: port))
    }

    /// A request as the listener would see it: `query` is already percent-encoded.
    static func request(_ pending: PendingAuthorization, path: String? = nil, host: String? = nil, query: String) -> RedirectRequest {
        RedirectRequest(target: (path ?? pending.provider.redirectPath) + "?" + query, host: host ?? "127.0.0.1:\(port)")
    }

    static func goodQuery(_ pending: PendingAuthorization, code: String = "fake-code-SplxlOBeZQQYbYS6WxSbIA") -> String {
        FormEncoding.encode([("code", code), ("state", pending.state.exposedValue), ("iss", "https://idp.example.com")])
    }

    // MARK: - Accepted

    @Test("a response with the right path, host, state and issuer yields its code")
    func accepted() throws {
        let pending = Self.pending()
        let code = try pending.validate(Self.request(pending, query: Self.goodQuery(pending)))
        #expect(code.value.exposedValue == "fake-code-SplxlOBeZQQYbYS6WxSbIA")
    }

    @Test("the listener's other loopback names at the same port are accepted", arguments: ["[::1]", "localhost", "LOCALHOST"])
    func otherLoopbackHosts(host: String) throws {
        let pending = Self.pending()
        let code = try pending.validate(Self.request(pending, host: "\(host):\(Self.port)", query: Self.goodQuery(pending)))
        #expect(code.value.exposedValue == "fake-code-SplxlOBeZQQYbYS6WxSbIA")
    }

    @Test("a percent-encoded code is decoded")
    func percentEncodedCode() throws {
        let pending = Self.pending()
        let code = try pending.validate(Self.request(pending, query: Self.goodQuery(pending, code: "4/0Ab+c=d&e f")))
        #expect(code.value.exposedValue == "4/0Ab+c=d&e f")
    }

    // MARK: - Not addressed to this request

    @Test("a response at another provider's redirect path is rejected")
    func anotherProvidersPath() {
        let pending = Self.pending()
        #expect(
            throws: AuthorizationResponseError.wrongRedirectPath(
                received: "/oauth2redirect/github", expected: "/oauth2redirect/example", provider: "example")
        ) {
            try pending.validate(Self.request(pending, path: "/oauth2redirect/github", query: Self.goodQuery(pending)))
        }
    }

    @Test(
        "a path that merely starts with the redirect path is rejected",
        arguments: ["/oauth2redirect/example/", "/oauth2redirect/examplex", "/oauth2redirect/EXAMPLE", "/oauth2redirect/%65xample"])
    func nearMissPath(path: String) {
        let pending = Self.pending()
        #expect {
            try pending.validate(Self.request(pending, path: path, query: Self.goodQuery(pending)))
        } throws: { error in
            guard case .wrongRedirectPath = error as? AuthorizationResponseError else { return false }
            return true
        }
    }

    @Test(
        "a request with a foreign or missing Host is rejected (DNS rebinding)",
        arguments: ["evil.example:53682", "127.0.0.1:1", "127.0.0.1", nil])
    func badHost(host: String?) {
        let pending = Self.pending()
        let request = RedirectRequest(target: pending.provider.redirectPath + "?" + Self.goodQuery(pending), host: host)
        #expect {
            try pending.validate(request)
        } throws: { error in
            guard case .wrongHost = error as? AuthorizationResponseError else { return false }
            return true
        }
    }

    // MARK: - state

    @Test("a response without state is rejected")
    func missingState() {
        let pending = Self.pending()
        #expect(throws: AuthorizationResponseError.missingState) {
            try pending.validate(Self.request(pending, query: "code=abc&iss=https%3A%2F%2Fidp.example.com"))
        }
    }

    @Test("a response with another request's state is rejected")
    func differentState() {
        let pending = Self.pending()
        let other = Self.pending()
        #expect(throws: AuthorizationResponseError.stateMismatch) {
            try pending.validate(Self.request(pending, query: Self.goodQuery(other)))
        }
    }

    @Test("an error response without the right state is not believed")
    func errorNeedsState() {
        let pending = Self.pending()
        #expect(throws: AuthorizationResponseError.missingState) {
            try pending.validate(Self.request(pending, query: "error=access_denied"))
        }
    }

    // MARK: - iss (RFC 9207)

    @Test("a response whose iss is another issuer is rejected")
    func issuerMismatch() {
        let pending = Self.pending()
        let query = FormEncoding.encode([("code", "abc"), ("state", pending.state.exposedValue), ("iss", "https://evil.example.com")])
        #expect(
            throws: AuthorizationResponseError.issuerMismatch(received: "https://evil.example.com", expected: "https://idp.example.com")
        ) {
            try pending.validate(Self.request(pending, query: query))
        }
    }

    @Test("iss is compared exactly: a trailing slash is another issuer")
    func issuerTrailingSlash() {
        let pending = Self.pending()
        let query = FormEncoding.encode([("code", "abc"), ("state", pending.state.exposedValue), ("iss", "https://idp.example.com/")])
        #expect(throws: AuthorizationResponseError.self) { try pending.validate(Self.request(pending, query: query)) }
    }

    @Test("a missing iss is rejected when the server promises it")
    func missingIssuerRequired() {
        let pending = Self.pending(requiresIssuerParameter: true)
        let query = FormEncoding.encode([("code", "abc"), ("state", pending.state.exposedValue)])
        #expect(throws: AuthorizationResponseError.missingIssuer) { try pending.validate(Self.request(pending, query: query)) }
    }

    @Test("a missing iss is accepted when the server does not promise it")
    func missingIssuerOptional() throws {
        let pending = Self.pending(requiresIssuerParameter: false)
        let query = FormEncoding.encode([("code", "abc"), ("state", pending.state.exposedValue)])
        #expect(try pending.validate(Self.request(pending, query: query)).value.exposedValue == "abc")
    }

    @Test("any iss is rejected when no issuer is configured")
    func issuerWithoutConfiguredIssuer() {
        let pending = Self.pending(provider: .testing(name: "plain", issuer: nil, isOpenID: false))
        let query = FormEncoding.encode([("code", "abc"), ("state", pending.state.exposedValue), ("iss", "https://idp.example.com")])
        #expect {
            try pending.validate(Self.request(pending, query: query))
        } throws: { error in
            guard case .issuerMismatch = error as? AuthorizationResponseError else { return false }
            return true
        }
    }

    // MARK: - Shape

    @Test("a parameter given twice is rejected", arguments: ["code", "state", "iss"])
    func duplicatedParameter(name: String) {
        let pending = Self.pending()
        let query =
            Self.goodQuery(pending) + "&"
            + FormEncoding.encode([(name, name == "state" ? pending.state.exposedValue : "https://idp.example.com")])
        #expect {
            try pending.validate(Self.request(pending, query: query))
        } throws: { error in
            guard case .malformed(let reason) = error as? AuthorizationResponseError else { return false }
            return reason.contains("more than once")
        }
    }

    @Test("broken percent-encoding is rejected")
    func brokenPercentEncoding() {
        let pending = Self.pending()
        #expect {
            try pending.validate(Self.request(pending, query: Self.goodQuery(pending) + "&x=%zz"))
        } throws: { error in
            guard case .malformed = error as? AuthorizationResponseError else { return false }
            return true
        }
    }

    @Test("a response with neither code nor error is rejected")
    func missingCode() {
        let pending = Self.pending()
        let query = FormEncoding.encode([("state", pending.state.exposedValue), ("code", "")])
        #expect(throws: AuthorizationResponseError.missingCode) { try pending.validate(Self.request(pending, query: query)) }
    }

    @Test("an error response keeps error, error_description and error_uri, and prints without control characters")
    func errorResponseSanitised() throws {
        let pending = Self.pending()
        let query = FormEncoding.encode([
            ("error", "access_denied\u{1B}[2J"), ("error_description", "The user said no\u{1B}]0;pwned\u{07}\u{9B}31m\u{202E}"),
            ("error_uri", "https://idp.example.com/help"), ("state", pending.state.exposedValue), ("iss", "https://idp.example.com"),
        ])
        do {
            _ = try pending.validate(Self.request(pending, query: query))
            Issue.record("an error response was accepted")
        } catch {
            guard case .authorizationServer(let response) = error else {
                Issue.record("expected .authorizationServer, got \(error)")
                return
            }
            #expect(response.error == "access_denied\u{1B}[2J")
            #expect(response.errorURI == "https://idp.example.com/help")
            let text = error.description
            #expect(text.contains("The user said no"))
            let forbidden: Set<UInt32> = [0x1B, 0x07, 0x9B, 0x202E]
            #expect(!text.unicodeScalars.contains { forbidden.contains($0.value) })
        }
    }

    // MARK: - Pasted URLs

    @Test("a pasted redirect URL is split into target and host and validates")
    func pastedURL() throws {
        let pending = Self.pending()
        let pasted = "  http://127.0.0.1:\(Self.port)/oauth2redirect/example?" + Self.goodQuery(pending) + "\n"
        let request = try RedirectRequest(pastedURL: pasted)
        #expect(request.host == "127.0.0.1:\(Self.port)")
        #expect(request.target == "/oauth2redirect/example?" + Self.goodQuery(pending))
        #expect(try pending.validate(request).value.exposedValue == "fake-code-SplxlOBeZQQYbYS6WxSbIA")
    }

    @Test("a pasted URL with a 100 KB query still parses and validates")
    func longPastedURL() throws {
        let pending = Self.pending()
        let padding = String(repeating: "a", count: 100_000)
        let pasted = "http://127.0.0.1:\(Self.port)/oauth2redirect/example?" + Self.goodQuery(pending) + "&session_state=" + padding
        let request = try RedirectRequest(pastedURL: pasted)
        #expect(request.target.utf8.count > 100_000)
        #expect(try pending.validate(request).value.exposedValue == "fake-code-SplxlOBeZQQYbYS6WxSbIA")
    }

    @Test(
        "text that is not an http URL is refused as a pasted redirect",
        arguments: ["", "fake-code-only", "https://127.0.0.1:53682/oauth2redirect/example?code=x", "javascript:alert(1)"])
    func unreadablePaste(text: String) {
        #expect(throws: AuthorizationResponseError.unreadablePastedURL) { try RedirectRequest(pastedURL: text) }
    }

    // MARK: - The authorization request

    static func queryItems(_ url: URL) throws -> [String: String] {
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        var result: [String: String] = [:]
        for item in items {
            #expect(result[item.name] == nil, "\(item.name) appears twice")
            result[item.name] = item.value
        }
        return result
    }

    @Test("the authorization URL carries PKCE S256, state, nonce, the exact redirect_uri and the extra parameters")
    func authorizationURLForOIDC() throws {
        let provider = OAuthProvider.testing(
            name: "example", scopes: ["openid", "email", "profile"],
            extraAuthorizationParameters: ["prompt": "select_account consent", "login_hint": "alice+test@example.com"])
        let pending = Self.pending(provider: provider)
        let url = pending.authorizationURL
        #expect(url.absoluteString.hasPrefix("https://idp.example.com/authorize?"))
        let query = try Self.queryItems(url)
        #expect(query["response_type"] == "code")
        #expect(query["client_id"] == "client-example")
        #expect(query["redirect_uri"] == "http://127.0.0.1:\(Self.port)/oauth2redirect/example")
        #expect(query["redirect_uri"] == pending.redirectURI)
        #expect(query["scope"] == "openid email profile")
        #expect(query["state"] == pending.state.exposedValue)
        #expect(query["code_challenge"] == pending.pkce.challenge)
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["nonce"] == pending.nonce?.exposedValue)
        #expect(query["nonce"] != nil)
        #expect(query["prompt"] == "select_account consent")
        #expect(query["login_hint"] == "alice+test@example.com")
        #expect(query["code_verifier"] == nil)
        #expect(!url.absoluteString.contains(pending.pkce.verifier.exposedValue))
    }

    @Test("an oauth2 authorization URL has no nonce")
    func authorizationURLForOAuth2() throws {
        let pending = Self.pending(provider: .testing(name: "plain", issuer: nil, scopes: ["read:user"], isOpenID: false))
        #expect(pending.nonce == nil)
        let query = try Self.queryItems(pending.authorizationURL)
        #expect(query["nonce"] == nil)
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["scope"] == "read:user")
    }

    @Test("query parameters already in the authorization endpoint are kept")
    func endpointQueryKept() throws {
        let provider = OAuthProvider.testing(name: "b2c")
        let metadata = ServerMetadata(
            issuer: provider.issuer, authorizationEndpoint: URL(string: "https://tenant.example.com/authorize?p=B2C_1_signin")!,
            tokenEndpoint: URL(string: "https://tenant.example.com/token")!)
        let pending = PendingAuthorization(provider: provider, metadata: metadata, redirectURI: provider.redirectURI(port: Self.port))
        let query = try Self.queryItems(pending.authorizationURL)
        #expect(query["p"] == "B2C_1_signin")
        #expect(query["state"] == pending.state.exposedValue)
    }

    @Test("every request gets its own state, nonce and verifier")
    func freshPerRequest() {
        let first = Self.pending()
        let second = Self.pending()
        #expect(first.state != second.state)
        #expect(first.nonce != second.nonce)
        #expect(first.pkce.verifier != second.pkce.verifier)
    }
}
