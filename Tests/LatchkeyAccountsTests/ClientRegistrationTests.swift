import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// Dynamic client registration (RFC 7591) and its deletion (RFC 7592) through the sign-in flow,
/// against the in-memory server behind a recording transport.
@Suite("Dynamic client registration")
struct ClientRegistrationTests {
    static let advertisesRegistration = #""registration_endpoint":"https://corp.example/register""#

    /// A server offering registration, and its provider as a file with `registration = "dynamic"`
    /// and no `client_id` would give it.
    static func server(discovery: String = advertisesRegistration) -> (FakeAuthorizationServer, Provider) {
        var choices = ProtocolChoices()
        choices.registration = .dynamic
        let server = FakeAuthorizationServer(discovery: discovery, choices: choices)
        var provider = server.provider
        guard case .oidc(var client) = provider.kind else { preconditionFailure("an oidc provider") }
        client.clientID = ""
        client.loopbackPorts = [38100]
        provider.kind = .oidc(client)
        return (server, provider)
    }

    func signIn(
        _ server: FakeAuthorizationServer, _ provider: Provider, keystore: InMemoryKeystore, person: ScriptedPerson? = nil
    ) async throws -> AccountRecord {
        let person =
            person
            ?? ScriptedPerson(answer: { _, _ in .cancel }) { url in
                guard let request = server.approve(url) else { return nil }
                return "http://\(request.host ?? "")\(request.target)"
            }
        return try await server.service(keystore: keystore, providers: [provider]).signIn(provider: provider, interaction: person).0
    }

    @Test("a provider without a client_id registers a native public client at the first sign-in, keeps it and signs in with it")
    func registersAtFirstSignIn() async throws {
        let (server, provider) = Self.server()
        let keystore = InMemoryKeystore()
        let record = try await signIn(server, provider, keystore: keystore)
        #expect(record.subject == "alice")
        let request = try #require(server.registrationRequests.first)
        #expect(request["token_endpoint_auth_method"] as? String == "none")
        #expect(request["grant_types"] as? [String] == ["authorization_code", "refresh_token"])
        #expect(request["redirect_uris"] as? [String] == ["http://127.0.0.1:38100/oauth2redirect/corp"])
        #expect(request["application_type"] as? String == "native" && request["client_confidential"] == nil)
        let kept = try #require(try await keystore.registeredClient(for: "corp"))
        #expect(kept.clientID == "registered-1" && kept.registrationAccessToken == Secret("fake-registration-token-1"))
        #expect(kept.registrationClientURI == "https://corp.example/register/registered-1")
        #expect(FakeAuthorizationServer.query(try #require(server.browser.urls.first))["client_id"] == "registered-1")
        #expect(server.transport.sent(to: "/token").last?.form["client_id"] == "registered-1")
    }

    @Test("later sign-ins and refreshes use the registered client without registering again")
    func reused() async throws {
        let (server, provider) = Self.server()
        let keystore = InMemoryKeystore()
        _ = try await signIn(server, provider, keystore: keystore)
        _ = try await signIn(server, provider, keystore: keystore)
        _ = try await server.service(keystore: keystore, providers: [provider]).refresh(AccountSelector(provider: "corp"))
        #expect(server.registrationRequests.count == 1)
        #expect(server.transport.sent(to: "/token").suffix(2).allSatisfy { $0.form["client_id"] == "registered-1" })
    }

    @Test("a client the server made confidential is deleted and registered again with client_confidential false; the person is told")
    func confidentialRegisteredAgain() async throws {
        let (server, provider) = Self.server()
        server.registration(.confidentialUnlessAsserted)
        let keystore = InMemoryKeystore()
        let person = ScriptedPerson(answer: { _, _ in .cancel }) { url in
            guard let request = server.approve(url) else { return nil }
            return "http://\(request.host ?? "")\(request.target)"
        }
        let record = try await signIn(server, provider, keystore: keystore, person: person)
        #expect(record.subject == "alice")
        #expect(server.registrationRequests.map { $0["client_confidential"] as? Bool } == [nil, false])
        #expect(server.deletedRegistrations == ["registered-1"])
        #expect(try await keystore.registeredClient(for: "corp")?.clientID == "registered-2")
        let told = try #require(person.log.registrationCorrections.first)
        #expect(told.contains("confidential client") && told.contains("unauthorized_client"))
    }

    @Test("a server that makes every client confidential ends the sign-in saying so; both are deleted and nothing is kept")
    func neverPublic() async throws {
        let (server, provider) = Self.server()
        server.registration(.alwaysConfidential)
        let keystore = InMemoryKeystore()
        do {
            _ = try await signIn(server, provider, keystore: keystore)
            Issue.record("a confidential client was used")
        } catch let error as ClientRegistrationError {
            guard case .notPublic(let name, let problem, let leftBehind) = error else { throw error }
            #expect(name == "corp" && problem.contains("unauthorized_client") && leftBehind.isEmpty)
            #expect(!error.description.contains("fake-registration-token"))
        }
        #expect(server.deletedRegistrations == ["registered-1", "registered-2"])
        #expect(try await keystore.registeredClients().isEmpty && server.browser.urls.isEmpty)
    }

    @Test("a registration refused is shown with the server's error before the browser opens, and nothing is kept")
    func refused() async throws {
        let (server, provider) = Self.server()
        server.registration(.refused)
        let keystore = InMemoryKeystore()
        await #expect(
            throws: TokenEndpointError.oauth(
                endpoint: "registration endpoint",
                OAuthErrorResponse(error: "invalid_client_metadata", errorDescription: "registration is closed"))
        ) { _ = try await signIn(server, provider, keystore: keystore) }
        #expect(try await keystore.registeredClients().isEmpty && server.browser.urls.isEmpty)
    }

    @Test("a registration endpoint answering 401 without a body is named as wanting an initial access token")
    func initialAccessTokenWanted() async throws {
        let (server, provider) = Self.server()
        server.transport.route("/register") { _ in .success(HTTPResponse(status: 401, body: [])) }
        do {
            _ = try await signIn(server, provider, keystore: InMemoryKeystore())
            Issue.record("a refused registration was used")
        } catch let error as TokenEndpointError {
            #expect(error.description.contains("registration endpoint") && error.description.contains("initial access token"))
        }
        #expect(server.browser.urls.isEmpty)
    }

    /// A registration answer that makes the client confidential, so that it is deleted at once
    /// (before any browser opens) with whatever token and URI the answer gave.
    static func hostileAnswer(token: String, clientURI: String) -> String {
        """
        {"client_id":"registered-1","client_secret":"fake-secret","token_endpoint_auth_method":"client_secret_basic",\
        "registration_access_token":"\(token)","registration_client_uri":"\(clientURI)"}
        """
    }

    @Test("a registration_access_token with a line break is refused as no token, and nothing is sent with it")
    func splittingRegistrationTokenRefused() async throws {
        let (server, provider) = Self.server()
        let token = #"fake\r\nX-Injected: 1\r\n\r\nGET /v1/secret HTTP/1.1"#
        server.transport.route(
            "/register", status: 201, json: Self.hostileAnswer(token: token, clientURI: "https://corp.example/register/registered-1"))
        let keystore = InMemoryKeystore()
        do {
            _ = try await signIn(server, provider, keystore: keystore)
            Issue.record("a registration answer with a header-splitting token was used")
        } catch let error as TokenEndpointError {
            #expect(error.description.contains("registration_access_token holds characters no token has"))
            #expect(!error.description.contains("X-Injected"))
        }
        #expect(server.transport.sent.filter { $0.method == .delete }.isEmpty)
        #expect(try await keystore.registeredClients().isEmpty && server.browser.urls.isEmpty)
    }

    @Test("a registration_client_uri on another origin than the registration endpoint is refused, and never requested")
    func clientURIOnAnotherOriginRefused() async throws {
        for uri in [
            "http://127.0.0.1:8200/v1/sys/seal", "https://elsewhere.example/register/registered-1", "https://corp.example:8443/register/1",
        ] {
            let (server, provider) = Self.server()
            server.transport.route("/register", status: 201, json: Self.hostileAnswer(token: "fake-registration-token", clientURI: uri))
            let keystore = InMemoryKeystore()
            do {
                _ = try await signIn(server, provider, keystore: keystore)
                Issue.record("a registration_client_uri at \(uri) was used")
            } catch let error as TokenEndpointError {
                #expect(error.description.contains("registration_client_uri") && error.description.contains("https://corp.example:443"))
            }
            #expect(
                server.transport.sent.allSatisfy { $0.method != .delete && $0.url.host == "corp.example" && $0.url.port == nil }, "\(uri)")
            #expect(try await keystore.registeredClients().isEmpty && server.browser.urls.isEmpty)
        }
    }

    @Test("a registration_client_uri on the registration endpoint's origin, default port written out or not, is kept")
    func clientURIOnTheSameOriginKept() throws {
        let endpoint = try #require(URL(string: "https://Corp.example/register"))
        for uri in ["https://corp.example:443/register/1", "https://corp.example/clients/1"] {
            let answer = HTTPResponse(status: 201, body: Array(Self.hostileAnswer(token: "fake-token", clientURI: uri).utf8))
            #expect(try ClientRegistrationResponse.parse(answer, from: endpoint).registrationClientURI?.absoluteString == uri)
        }
    }

    @Test("a server without a registration_endpoint is named as such before anything is sent to it")
    func noEndpoint() async throws {
        let (server, provider) = Self.server(discovery: #""scopes_supported":["openid"]"#)
        await #expect(throws: ClientRegistrationError.noEndpoint(provider: "corp")) {
            _ = try await signIn(server, provider, keystore: InMemoryKeystore())
        }
        #expect(server.registrationRequests.isEmpty)
    }

    @Test("other redirect URIs register again and delete the registration they replace")
    func otherPortsRegisterAgain() async throws {
        let (server, original) = Self.server()
        var provider = original
        let keystore = InMemoryKeystore()
        _ = try await signIn(server, provider, keystore: keystore)
        guard case .oidc(var client) = provider.kind else { return }
        client.loopbackPorts = [38101]
        provider.kind = .oidc(client)
        _ = try await signIn(server, provider, keystore: keystore)
        #expect(server.registrationRequests.count == 2 && server.deletedRegistrations == ["registered-1"])
        #expect(try await keystore.registeredClients().map(\.clientID) == ["registered-2"])
    }

    @Test("removing the provider deletes its registration with the registration access token and forgets it")
    func removal() async throws {
        let (server, provider) = Self.server()
        let keystore = InMemoryKeystore()
        _ = try await signIn(server, provider, keystore: keystore)
        let service = server.service(keystore: keystore, providers: [provider])
        let outcome = try await service.removeRegisteredClient(of: "corp")
        #expect(try outcome?.get() == .deleted)
        let deletion = try #require(server.transport.sent(to: "/register/registered-1").first)
        #expect(deletion.method == .delete && deletion.header("Authorization") == "Bearer fake-registration-token-1")
        #expect(try await keystore.registeredClients().isEmpty)
        #expect(try await service.removeRegisteredClient(of: "corp") == nil)
    }

    @Test("a refresh with no registered client in the vault asks for a sign-in instead of sending an empty client_id")
    func refreshWithoutClient() async throws {
        let (server, provider) = Self.server()
        let keystore = InMemoryKeystore()
        _ = try await signIn(server, provider, keystore: keystore)
        _ = try await keystore.updateRegisteredClients { $0.removeAll() }
        let sent = server.transport.sent.count
        await #expect(throws: ClientRegistrationError.notRegistered(provider: "corp")) {
            _ = try await server.service(keystore: keystore, providers: [provider]).refresh(AccountSelector(provider: "corp"))
        }
        #expect(server.transport.sent.count == sent)
    }

    static let advertisesDeviceGrant = advertisesRegistration + #","device_authorization_endpoint":"https://corp.example/device""#

    @Test(
        "where the server has a device authorization endpoint, the registration asks for the device grant too and the client is kept as granted it"
    )
    func asksForTheDeviceGrant() async throws {
        let (server, provider) = Self.server(discovery: Self.advertisesDeviceGrant)
        let keystore = InMemoryKeystore()
        _ = try await signIn(server, provider, keystore: keystore)
        let request = try #require(server.registrationRequests.first)
        #expect(
            request["grant_types"] as? [String] == ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"])
        #expect(try await keystore.registeredClient(for: "corp")?.grantsDeviceCode == true)
    }

    @Test("a server that refuses the device grant at registration is asked again without it, and the person is told why")
    func registersWithoutTheDeviceGrantItRefuses() async throws {
        let (server, provider) = Self.server(discovery: Self.advertisesDeviceGrant)
        server.registration(.codeAndRefreshGrantsOnly)
        let keystore = InMemoryKeystore()
        let person = ScriptedPerson(answer: { _, _ in .cancel }) { url in
            guard let request = server.approve(url) else { return nil }
            return "http://\(request.host ?? "")\(request.target)"
        }
        _ = try await signIn(server, provider, keystore: keystore, person: person)
        #expect(server.registrationRequests.map { ($0["grant_types"] as? [String])?.count } == [3, 2])
        let kept = try #require(try await keystore.registeredClient(for: "corp"))
        #expect(kept.clientID == "registered-2" && kept.grantsDeviceCode == false)
        #expect(
            person.log.registrationCorrections.contains {
                $0.contains("refused a registration asking for the device grant too (invalid_client_metadata)")
            })
    }

    @Test("the flow registers after discovery and before the listener is bound; a device sign-in needs a client granted the device grant")
    func flowOrder() throws {
        let (server, provider) = Self.server()
        let metadata = ServerMetadata(
            issuer: server.issuer.issuer, authorizationEndpoint: URL(string: "https://corp.example/authorize")!,
            tokenEndpoint: URL(string: "https://corp.example/token")!, jwksURI: URL(string: "https://corp.example/jwks"))
        var flow = SignInFlow(provider: provider, mode: .loopback)
        guard case .openKeystore = flow.start(), case .fetchMetadata = flow.handle(.keystoreOpened),
            case .registerClient(let registering, _, forDevice: false) = flow.handle(.metadataFetched(metadata))
        else {
            Issue.record("no registration after discovery")
            return
        }
        #expect(registering.clientID.isEmpty)
        guard case .bindListener(let bound) = flow.handle(.clientRegistered(clientID: "registered-9", grantsDeviceCode: false)) else {
            Issue.record("no listener after the registration")
            return
        }
        #expect(bound.clientID == "registered-9")

        func deviceSignIn(registered grantsDeviceCode: Bool) -> SignInFlow.Action {
            var device = SignInFlow(provider: provider, mode: .device)
            _ = device.start()
            _ = device.handle(.keystoreOpened)
            guard case .registerClient(_, _, forDevice: true) = device.handle(.metadataFetched(metadata)) else {
                return .failed(SignInError.cancelled)
            }
            return device.handle(.clientRegistered(clientID: "registered-9", grantsDeviceCode: grantsDeviceCode))
        }
        guard case .failed(let error) = deviceSignIn(registered: false) else {
            Issue.record("a device sign-in went on with a client not registered for it")
            return
        }
        #expect(error as? ClientRegistrationError == .deviceNotRegistered(provider: "corp"))
        guard case .startDeviceAuthorization(let started, _) = deviceSignIn(registered: true) else {
            Issue.record("a device sign-in did not start with a client registered for it")
            return
        }
        #expect(started.clientID == "registered-9")
    }

    @Test("without loopback_port the listener is bound first and the client registered for its very port, then the browser goes there")
    func registersTheBoundPort() throws {
        let (server, withPort) = Self.server()
        var provider = withPort
        guard case .oidc(var client) = provider.kind else { preconditionFailure("an oidc provider") }
        client.loopbackPorts = []
        provider.kind = .oidc(client)
        let metadata = ServerMetadata(
            issuer: server.issuer.issuer, authorizationEndpoint: URL(string: "https://corp.example/authorize")!,
            tokenEndpoint: URL(string: "https://corp.example/token")!, jwksURI: URL(string: "https://corp.example/jwks"))
        var flow = SignInFlow(provider: provider, mode: .loopback)
        guard case .openKeystore = flow.start(), case .fetchMetadata = flow.handle(.keystoreOpened),
            case .bindListener(let binding) = flow.handle(.metadataFetched(metadata))
        else {
            Issue.record("no listener before the registration")
            return
        }
        #expect(binding.loopbackPorts.isEmpty, "any port, or the one registered before (the runner's choice)")
        guard
            case .registerClient(let registering, _, forDevice: false) = flow.handle(
                .listenerBound(port: 41234, addresses: ["127.0.0.1:41234"]))
        else {
            Issue.record("no registration after the listener")
            return
        }
        #expect(registering.registeredRedirectURIs == ["http://127.0.0.1:41234/oauth2redirect/corp"])
        guard
            case .openBrowser(let pending, ["127.0.0.1:41234"]) = flow.handle(
                .clientRegistered(clientID: "registered-9", grantsDeviceCode: false))
        else {
            Issue.record("no browser after the registration")
            return
        }
        #expect(pending.redirectURI == "http://127.0.0.1:41234/oauth2redirect/corp" && pending.provider.clientID == "registered-9")
    }

    @Test("the provider file's registration key: dynamic without client_id, and what it cannot go with")
    func providerFile() throws {
        let base = "display_name = \"Corp\"\nkind = \"oidc\"\nissuer = \"https://corp.example\"\n"
        let parser = ProviderFileParser()
        let parsed = try parser.parse(base + "registration = \"dynamic\"\n", file: "/p/corp.toml").get()
        guard case .oidc(let client) = parsed.kind else {
            Issue.record("not an oidc provider")
            return
        }
        #expect(client.choices.registration == .dynamic && client.clientID.isEmpty)
        func errors(_ text: String) -> [String] {
            guard case .failure(let errors) = parser.parse(text, file: "/p/corp.toml") else { return [] }
            return errors.errors.map { "\($0.field ?? ""): \($0.message)" }
        }
        #expect(errors(base + "registration = \"dynamic\"\nclient_id = \"x\"\n").first?.hasPrefix("client_id: cannot be used with") == true)
        #expect(errors(base + "registration = \"dynamic\"\nredirect = \"device\"\n").first?.contains("redirect = \"device\"") == true)
        #expect(errors(base + "registration = \"sometimes\"\n").first?.contains("\"static\", \"dynamic\"") == true)
        let noIssuer =
            "display_name = \"Corp\"\nkind = \"oauth2\"\nauthorization_endpoint = \"https://corp.example/a\"\n"
            + "token_endpoint = \"https://corp.example/t\"\nregistration = \"dynamic\"\n"
        #expect(errors(noIssuer).first?.hasPrefix("registration: \"dynamic\" needs issuer") == true)
    }
}
