import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// Pushed authorization requests (RFC 9126) through the sign-in flow, against the in-memory
/// server behind a recording transport.
@Suite("Pushed authorization requests")
struct PushedAuthorizationTests {
    static let advertisesPAR = #""pushed_authorization_request_endpoint":"https://corp.example/par""#

    func signIn(_ server: FakeAuthorizationServer, keystore: InMemoryKeystore = InMemoryKeystore(), mode: OAuthClient.RedirectMode? = nil)
        async throws -> AccountRecord
    {
        let person = ScriptedPerson(answer: { _, _ in .cancel }) { url in
            guard let request = server.approve(url) else { return nil }
            return "http://\(request.host ?? "")\(request.target)"
        }
        return try await server.service(keystore: keystore).signIn(provider: server.provider, mode: mode, interaction: person).0
    }

    @Test("with a PAR endpoint in discovery the whole request is pushed and the browser carries only client_id and request_uri")
    func pushed() async throws {
        let server = FakeAuthorizationServer(discovery: Self.advertisesPAR)
        let record = try await signIn(server)
        #expect(record.subject == "alice")
        let push = try #require(server.transport.sent(to: "/par").first)
        let form = push.form
        for name in ["response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"] {
            #expect(form[name] != nil, "\(name) is pushed")
        }
        #expect(form["code_challenge_method"] == "S256" && form["request_uri"] == nil)
        let opened = FakeAuthorizationServer.query(try #require(server.browser.urls.first))
        #expect(opened.keys.sorted() == ["client_id", "request_uri"])
        #expect(opened["request_uri"]?.hasPrefix("urn:ietf:params:oauth:request_uri:") == true)
    }

    @Test("paste mode pushes too, before the person is shown the URL")
    func pushedInPasteMode() async throws {
        let server = FakeAuthorizationServer(clock: FixedClock(deadlinesWait: true), discovery: Self.advertisesPAR)
        _ = try await signIn(server, mode: .paste)
        #expect(server.transport.sent(to: "/par").count == 1)
    }

    @Test("every sign-in pushes its own request: a request_uri is never reused, and the server takes each once")
    func freshRequestEachTime() async throws {
        let server = FakeAuthorizationServer(discovery: Self.advertisesPAR)
        let keystore = InMemoryKeystore()
        _ = try await signIn(server, keystore: keystore)
        _ = try await signIn(server, keystore: keystore)
        let uris = server.browser.urls.map { FakeAuthorizationServer.query($0)["request_uri"] }
        #expect(uris.count == 2 && Set(uris).count == 2)
        #expect(server.approve(try #require(server.browser.urls.first)) == nil, "a used request_uri is refused")
    }

    @Test("par = never keeps the request in the browser's URL although the server offers PAR")
    func never() async throws {
        let server = FakeAuthorizationServer(discovery: Self.advertisesPAR, choices: ProtocolChoices(pushedAuthorization: .never))
        _ = try await signIn(server)
        #expect(server.transport.sent(to: "/par").isEmpty)
        #expect(FakeAuthorizationServer.query(try #require(server.browser.urls.first))["code_challenge"] != nil)
    }

    @Test("par = never at a server that requires PAR, and par = always at one without it, fail before the browser opens")
    func impossibleChoices() async throws {
        let requiring = FakeAuthorizationServer(
            discovery: Self.advertisesPAR + #","require_pushed_authorization_requests":true"#,
            choices: ProtocolChoices(pushedAuthorization: .never))
        await #expect(throws: ProtocolChoiceError.pushedAuthorizationRequired(provider: "corp")) { _ = try await signIn(requiring) }
        let lacking = FakeAuthorizationServer(
            discovery: #""scopes_supported":["openid"]"#, choices: ProtocolChoices(pushedAuthorization: .always))
        await #expect(
            throws: ProtocolChoiceError.missingEndpoint(provider: "corp", field: "pushed_authorization_request_endpoint", key: "par")
        ) { _ = try await signIn(lacking) }
        #expect(requiring.browser.urls.isEmpty && lacking.browser.urls.isEmpty)
    }

    @Test("an error from the PAR endpoint is shown as a token endpoint error is, and a bare 403 says what it is; nothing is stored")
    func errors() async throws {
        let server = FakeAuthorizationServer(discovery: Self.advertisesPAR)
        let keystore = InMemoryKeystore()
        server.transport.route(
            "/par", status: 400, json: #"{"error":"invalid_request","error_description":"redirect_uri\u001b[31m is not registered"}"#)
        await #expect(
            throws: TokenEndpointError.oauth(
                endpoint: "pushed authorization request endpoint",
                OAuthErrorResponse(error: "invalid_request", errorDescription: "redirect_uri\u{1b}[31m is not registered"))
        ) { _ = try await signIn(server, keystore: keystore) }
        server.transport.route("/par") { _ in .success(HTTPResponse(status: 403, body: [])) }
        do {
            _ = try await signIn(server, keystore: keystore)
            Issue.record("a 403 was accepted")
        } catch let error as TokenEndpointError {
            #expect(error.description.contains("pushed authorization request endpoint") && error.description.contains("HTTP 403"))
        }
        server.transport.route("/par", status: 201, json: #"{"request_uri":"has a space","expires_in":60}"#)
        await #expect(throws: TokenEndpointError.self) { _ = try await signIn(server, keystore: keystore) }
        let stored = try await keystore.records()
        #expect(server.browser.urls.isEmpty && stored.isEmpty)
    }

    @Test("a DPoP sign-in pushes the key's thumbprint as dpop_jkt")
    func pushedWithDPoP() async throws {
        let server = FakeAuthorizationServer(discovery: Self.advertisesPAR + "," + FakeAuthorizationServer.advertisesES256)
        let record = try await signIn(server)
        let key = try DPoPKey(stored: try #require(record.dpopKey))
        let push = try #require(server.transport.sent(to: "/par").first)
        #expect(push.form["dpop_jkt"] == key.thumbprint && push.header("DPoP") == nil)
    }
}
