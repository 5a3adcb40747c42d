import DemoOpenIDProvider
import Foundation
import IdentityToolkitEmulator
import LatchkeyCrypto
import Testing

/// The demo provider's endpoints, called through its routing (no socket needed for these).
struct DemoProviderClient {
    let provider: DemoOpenIDProvider
    let verifier = String(repeating: "v", count: 43)
    var challenge: String {
        Data(SHA256.hash(data: Array(verifier.utf8))).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
    let redirectURI = "http://127.0.0.1:51234/oauth2redirect/demo-openid"

    static func start() async throws -> DemoProviderClient {
        DemoProviderClient(
            provider: try await DemoOpenIDProvider.start(
                configuration: DemoOpenIDConfiguration(redirectPaths: ["/oauth2redirect/demo-openid"])))
    }

    func get(_ path: String, _ query: [String: String] = [:], headers: [String: String] = [:]) -> EmulatorResponse {
        var components = URLComponents()
        components.path = path
        if !query.isEmpty {
            components.queryItems = query.map { URLQueryItem(name: $0.key, value: $0.value) }
            // As a browser sends a form value: `+` encoded, or the server would read a space.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        }
        return provider.state.handle(EmulatorRequest(method: "GET", uri: components.string!, headers: headers, body: []))
    }

    func post(_ path: String, _ form: [String: String]) -> EmulatorResponse {
        var components = URLComponents()
        components.queryItems = form.map { URLQueryItem(name: $0.key, value: $0.value) }
        let body = components.percentEncodedQuery!.replacingOccurrences(of: "+", with: "%2B")
        return provider.state.handle(
            EmulatorRequest(
                method: "POST", uri: path, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array(body.utf8)))
    }

    func json(_ response: EmulatorResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    func location(_ response: EmulatorResponse) -> URLComponents? {
        response.headers.first { $0.name == "Location" }.flatMap { URLComponents(string: $0.value) }
    }

    func authorizationQuery(_ extra: [String: String] = [:]) -> [String: String] {
        [
            "response_type": "code", "client_id": "latchkey-demo", "redirect_uri": redirectURI, "scope": "openid profile email",
            "state": "s+1", "nonce": "n-1", "code_challenge": challenge, "code_challenge_method": "S256",
        ].merging(extra) { $1 }
    }

    /// Signs ada in on the login page; the code from the redirect.
    func code() throws -> String {
        let page = String(decoding: get("/authorize", authorizationQuery()).body, as: UTF8.self)
        let requestID = try #require(page.firstMatch(of: #/name="request_id" value="([^"]+)"/#)).1
        let redirect = post(
            "/authorize", ["request_id": String(requestID), "username": "ada", "password": "lovelace-demo", "action": "login"])
        let items = try #require(location(redirect)?.queryItems)
        return try #require(items.first { $0.name == "code" }?.value)
    }

    func exchange(_ code: String, verifier: String? = nil) -> EmulatorResponse {
        post(
            "/token",
            [
                "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "client_id": "latchkey-demo",
                "code_verifier": verifier ?? self.verifier,
            ])
    }
}

@Suite("the demo OpenID provider follows the protocol")
struct DemoOpenIDProviderTests {
    @Test("discovery advertises the iss parameter, S256 only, and every endpoint latchkey uses")
    func discovery() async throws {
        let client = try await DemoProviderClient.start()
        let document = try client.json(client.get("/.well-known/openid-configuration"))
        #expect(document["issuer"] as? String == client.provider.issuer)
        #expect(document["authorization_response_iss_parameter_supported"] as? Bool == true)
        #expect(document["code_challenge_methods_supported"] as? [String] == ["S256"])
        for endpoint in ["revocation_endpoint", "userinfo_endpoint", "device_authorization_endpoint", "jwks_uri"] {
            #expect((document[endpoint] as? String)?.hasPrefix(client.provider.issuer) == true, "\(endpoint)")
        }
    }

    @Test("an unregistered redirect path gets an error page, never a redirect")
    func unregisteredRedirect() async throws {
        let client = try await DemoProviderClient.start()
        for uri in ["http://127.0.0.1:5000/oauth2redirect/other", "https://evil.example/oauth2redirect/demo-openid"] {
            let answer = client.get("/authorize", client.authorizationQuery(["redirect_uri": uri]))
            #expect(answer.status == 400)
            #expect(client.location(answer) == nil)
        }
    }

    @Test("a request without PKCE goes back with invalid_request, its state and the issuer")
    func pkceRequired() async throws {
        let client = try await DemoProviderClient.start()
        var query = client.authorizationQuery()
        query["code_challenge"] = nil
        let answer = client.get("/authorize", query)
        let items = try #require(client.location(answer)?.queryItems)
        #expect(answer.status == 302)
        #expect(items.first { $0.name == "error" }?.value == "invalid_request")
        #expect(items.first { $0.name == "state" }?.value == "s+1")
        #expect(items.first { $0.name == "iss" }?.value == client.provider.issuer)
    }

    @Test("a wrong password shows the login page again; a code works once and only with its verifier")
    func codeExchange() async throws {
        let client = try await DemoProviderClient.start()
        let page = String(decoding: client.get("/authorize", client.authorizationQuery()).body, as: UTF8.self)
        let requestID = try #require(page.firstMatch(of: #/name="request_id" value="([^"]+)"/#)).1
        let wrong = client.post("/authorize", ["request_id": String(requestID), "username": "ada", "password": "nope", "action": "login"])
        #expect(wrong.status == 401 && client.location(wrong) == nil)

        let code = try client.code()
        #expect(try client.json(client.exchange(code, verifier: String(repeating: "w", count: 43)))["error"] as? String == "invalid_grant")
        // The failed attempt used the code up, as a stolen code must not be retried.
        #expect(try client.json(client.exchange(code))["error"] as? String == "invalid_grant")
        let tokens = try client.json(client.exchange(try client.code()))
        #expect(tokens["token_type"] as? String == "Bearer")
        #expect(tokens["id_token"] is String && tokens["refresh_token"] is String)
    }

    @Test("a refresh token used twice revokes its whole family")
    func refreshRotation() async throws {
        let client = try await DemoProviderClient.start()
        let first = try client.json(client.exchange(try client.code()))
        let refresh = { (token: String) in
            try client.json(client.post("/token", ["grant_type": "refresh_token", "refresh_token": token, "client_id": "latchkey-demo"]))
        }
        let second = try refresh(try #require(first["refresh_token"] as? String))
        let rotated = try #require(second["refresh_token"] as? String)
        #expect(try refresh(try #require(first["refresh_token"] as? String))["error"] as? String == "invalid_grant")
        #expect(try refresh(rotated)["error"] as? String == "invalid_grant", "the replay revoked the rotated token too")
    }

    @Test("revoking the refresh token ends its access token at userinfo")
    func revocation() async throws {
        let client = try await DemoProviderClient.start()
        let tokens = try client.json(client.exchange(try client.code()))
        let bearer = ["Authorization": "Bearer \(try #require(tokens["access_token"] as? String))"]
        #expect(try client.json(client.get("/userinfo", headers: bearer))["email"] as? String == "ada@demo.test")
        #expect(
            client.post("/revoke", ["token": try #require(tokens["refresh_token"] as? String), "client_id": "latchkey-demo"]).status == 200)
        #expect(client.get("/userinfo", headers: bearer).status == 401)
    }

    @Test("the device grant waits for the person, who approves with the code and the password")
    func deviceGrant() async throws {
        let client = try await DemoProviderClient.start()
        let authorization = try client.json(client.post("/device_authorization", ["client_id": "latchkey-demo", "scope": "openid"]))
        let deviceCode = try #require(authorization["device_code"] as? String)
        let userCode = try #require(authorization["user_code"] as? String)
        let poll = {
            try client.json(
                client.post(
                    "/token",
                    ["grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": deviceCode, "client_id": "latchkey-demo"])
            )
        }
        #expect(try poll()["error"] as? String == "authorization_pending")
        #expect(client.post("/device", ["user_code": userCode, "username": "ada", "password": "nope"]).status == 400)
        #expect(client.post("/device", ["user_code": userCode.lowercased(), "username": "ada", "password": "lovelace-demo"]).status == 200)
        try await Task.sleep(for: .seconds(2))
        #expect(try poll()["access_token"] is String)
    }
}
