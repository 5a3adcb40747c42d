import Foundation
import IdentityToolkitEmulator
import LatchkeyCrypto

/// One request against the demo provider's storage: each endpoint is a method.
struct Route {
    let request: EmulatorRequest
    let configuration: DemoOpenIDConfiguration
    let signer: TokenSigner
    let now: Date

    static let deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    func answer(_ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        switch (request.method, request.path) {
        case ("GET", "/.well-known/openid-configuration"): return discovery(issuer: storage.issuer)
        case ("GET", "/jwks"): return .json((try? signer.keySet()) ?? [:])
        case ("GET", "/authorize"): return authorize(&storage)
        case ("POST", "/authorize"): return logIn(&storage)
        case ("POST", "/token"): return token(&storage)
        case ("POST", "/revoke"): return revoke(&storage)
        case ("GET", "/userinfo"), ("POST", "/userinfo"): return userinfo(storage)
        case ("POST", "/device_authorization"): return deviceAuthorization(&storage)
        case ("GET", "/device"): return DemoPages.device(userCode: request.query["user_code"] ?? "", problem: nil)
        case ("POST", "/device"): return approveDevice(&storage)
        case ("GET", "/"): return DemoPages.home(issuer: storage.issuer)
        default: return DemoPages.problem("No such page: \(request.method) \(request.path)", status: 404)
        }
    }

    var form: [String: String] { Encoding.formDecode(String(decoding: request.body, as: UTF8.self)) }

    // MARK: - Discovery

    func discovery(issuer: String) -> EmulatorResponse {
        .json([
            "issuer": issuer,
            "authorization_endpoint": issuer + "/authorize",
            "token_endpoint": issuer + "/token",
            "userinfo_endpoint": issuer + "/userinfo",
            "jwks_uri": issuer + "/jwks",
            "revocation_endpoint": issuer + "/revoke",
            "device_authorization_endpoint": issuer + "/device_authorization",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token", Self.deviceGrantType],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "claims_supported": [
                "sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "name", "preferred_username", "email", "email_verified",
            ],
            "authorization_response_iss_parameter_supported": true,
        ])
    }

    // MARK: - Authorization endpoint

    /// RFC 6749 §4.1.1 with PKCE (RFC 7636 §4.3): a request with an unknown client or
    /// unregistered redirect URI gets an error page (never a redirect, §4.1.2.1); other problems
    /// go back to the client with `error`, `state` and `iss` (RFC 9207).
    func authorize(_ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        let query = request.query
        guard query["client_id"] == configuration.clientID else {
            return DemoPages.problem("Unknown client_id. This demo provider knows only \(configuration.clientID).", status: 400)
        }
        guard let redirectURI = query["redirect_uri"], isRegistered(redirectURI) else {
            return DemoPages.problem(
                "The redirect_uri is not registered: it must be http://127.0.0.1, [::1] or localhost on any port with one of the paths "
                    + configuration.redirectPaths.sorted().joined(separator: ", ") + ".", status: 400)
        }
        let state = query["state"]
        func reject(_ error: String, _ description: String) -> EmulatorResponse {
            redirect(to: redirectURI, ["error": error, "error_description": description, "state": state], issuer: storage.issuer)
        }
        guard query["response_type"] == "code" else { return reject("unsupported_response_type", "only response_type=code") }
        guard let challenge = query["code_challenge"], challenge.count == 43 else {
            return reject("invalid_request", "PKCE is required: code_challenge (43 characters, S256)")
        }
        guard query["code_challenge_method"] == "S256" else { return reject("invalid_request", "code_challenge_method must be S256") }
        let scope = query["scope"] ?? "openid"
        let requestID = Encoding.randomToken(length: 32)
        storage.pending = storage.pending.filter { now.timeIntervalSince($0.value.createdAt) < 900 }
        storage.pending[requestID] = .init(
            redirectURI: redirectURI, state: state, nonce: query["nonce"], codeChallenge: challenge, scope: scope, createdAt: now)
        return DemoPages.login(requestID: requestID, loginHint: query["login_hint"], problem: nil)
    }

    /// The login form's submission: the right password issues a code and redirects to the client.
    func logIn(_ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        let form = form
        guard let requestID = form["request_id"], let pending = storage.pending[requestID] else {
            return DemoPages.problem("This sign-in page has expired; start the sign-in again from Latchkey.", status: 400)
        }
        if form["action"] == "cancel" {
            storage.pending[requestID] = nil
            return redirect(
                to: pending.redirectURI, ["error": "access_denied", "error_description": "the person cancelled", "state": pending.state],
                issuer: storage.issuer)
        }
        guard form["username"] == configuration.user.username, form["password"] == configuration.user.password else {
            return DemoPages.login(requestID: requestID, loginHint: form["username"], problem: "Wrong username or password.")
        }
        storage.pending[requestID] = nil
        let code = Encoding.randomToken(length: 40)
        storage.codes[code] = .init(
            redirectURI: pending.redirectURI, codeChallenge: pending.codeChallenge, nonce: pending.nonce, scope: pending.scope,
            issuedAt: now)
        return redirect(to: pending.redirectURI, ["code": code, "state": pending.state], issuer: storage.issuer)
    }

    func isRegistered(_ redirectURI: String) -> Bool {
        guard let components = URLComponents(string: redirectURI), components.scheme == "http",
            ["127.0.0.1", "[::1]", "::1", "localhost"].contains(components.host ?? ""), components.query == nil, components.fragment == nil
        else { return false }
        return configuration.redirectPaths.contains(components.path)
    }

    func redirect(to redirectURI: String, _ parameters: [String: String?], issuer: String) -> EmulatorResponse {
        var components = URLComponents(string: redirectURI)!
        components.queryItems =
            (parameters.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
            + [URLQueryItem(name: "iss", value: issuer)]).sorted { $0.name < $1.name }
        // `+` is a space to form decoders: encoded so a state holding one comes back unchanged.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        let location = components.string ?? redirectURI
        return EmulatorResponse(
            status: 302, body: Array(DemoPages.redirectNotice(location).utf8), contentType: "text/html; charset=utf-8",
            headers: [("Location", location), ("Cache-Control", "no-store")])
    }

    // MARK: - Token endpoint

    func token(_ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        let form = form
        guard form["client_id"] == configuration.clientID else { return oauthError("invalid_client", "unknown client_id", status: 401) }
        switch form["grant_type"] {
        case "authorization_code": return exchangeCode(form, &storage)
        case "refresh_token": return refresh(form, &storage)
        case Self.deviceGrantType: return pollDevice(form, &storage)
        default: return oauthError("unsupported_grant_type", "grant_type must be authorization_code, refresh_token or device_code")
        }
    }

    /// RFC 6749 §4.1.3 and RFC 7636 §4.6: one use, the same redirect URI, the verifier that hashes to the challenge.
    func exchangeCode(_ form: [String: String], _ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        guard let code = form["code"], let issued = storage.codes.removeValue(forKey: code) else {
            return oauthError("invalid_grant", "the code is unknown or was already used")
        }
        guard now.timeIntervalSince(issued.issuedAt) <= configuration.codeLifetime else {
            return oauthError("invalid_grant", "the code expired")
        }
        guard form["redirect_uri"] == issued.redirectURI else {
            return oauthError("invalid_grant", "redirect_uri differs from the request's")
        }
        guard let verifier = form["code_verifier"], verifier.count >= 43, verifier.count <= 128,
            Encoding.base64URL(Array(SHA256.hash(data: Array(verifier.utf8)))) == issued.codeChallenge
        else { return oauthError("invalid_grant", "code_verifier does not match the code_challenge") }
        return issueTokens(scope: issued.scope, nonce: issued.nonce, family: nil, &storage)
    }

    /// RFC 6749 §6 with rotation: every refresh token works once; a rotated-out one used again
    /// revokes its whole family (it was stolen, or a copy raced).
    func refresh(_ form: [String: String], _ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        guard let token = form["refresh_token"] else { return oauthError("invalid_request", "refresh_token is missing") }
        if let family = storage.rotatedOut[token] {
            storage.revokedFamilies.insert(family)
            return oauthError("invalid_grant", "this refresh token was already used; the session is revoked")
        }
        guard let grant = storage.refreshTokens.removeValue(forKey: token), !storage.revokedFamilies.contains(grant.family) else {
            return oauthError("invalid_grant", "the refresh token is unknown or revoked")
        }
        storage.rotatedOut[token] = grant.family
        return issueTokens(scope: grant.scope, nonce: nil, family: grant.family, &storage)
    }

    /// RFC 8628 §3.4–3.5.
    func pollDevice(_ form: [String: String], _ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        guard let deviceCode = form["device_code"], var grant = storage.devices[deviceCode] else {
            return oauthError("invalid_grant", "unknown device_code")
        }
        guard now < grant.expiresAt else {
            storage.devices[deviceCode] = nil
            return oauthError("expired_token", "the device code expired")
        }
        if grant.denied {
            storage.devices[deviceCode] = nil
            return oauthError("access_denied", "the person declined")
        }
        guard grant.approved else {
            let tooSoon = grant.lastPoll.map { now.timeIntervalSince($0) < Double(configuration.deviceInterval) - 0.5 } ?? false
            grant.lastPoll = now
            storage.devices[deviceCode] = grant
            return tooSoon
                ? oauthError("slow_down", "poll at most every \(configuration.deviceInterval) s")
                : oauthError("authorization_pending", "waiting for the person")
        }
        storage.devices[deviceCode] = nil
        return issueTokens(scope: grant.scope, nonce: nil, family: nil, &storage)
    }

    func issueTokens(scope: String, nonce: String?, family: String?, _ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        let user = configuration.user
        let family = family ?? Encoding.randomToken(length: 16)
        let accessToken = Encoding.randomToken(length: 43)
        let refreshToken = Encoding.randomToken(length: 48)
        let expiresAt = now.addingTimeInterval(configuration.accessTokenLifetime)
        storage.accessTokens[accessToken] = (scope, family, expiresAt)
        storage.refreshTokens[refreshToken] = .init(family: family, scope: scope)
        var body: [String: Any] = [
            "access_token": accessToken, "token_type": "Bearer", "expires_in": Int(configuration.accessTokenLifetime),
            "refresh_token": refreshToken, "scope": scope,
        ]
        if scope.split(separator: " ").contains("openid") {
            var claims: [String: Any] = [
                "iss": storage.issuer, "sub": user.subject, "aud": configuration.clientID, "iat": Int(now.timeIntervalSince1970),
                "exp": Int(expiresAt.timeIntervalSince1970), "auth_time": Int(now.timeIntervalSince1970),
                "preferred_username": user.username, "name": user.name, "email": user.email, "email_verified": true,
            ]
            if let nonce { claims["nonce"] = nonce }
            body["id_token"] = try? signer.sign(claims)
        }
        var response = EmulatorResponse.json(body)
        response.headers = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]
        return response
    }

    func oauthError(_ error: String, _ description: String, status: Int = 400) -> EmulatorResponse {
        var response = EmulatorResponse.json(["error": error, "error_description": description], status: status)
        response.headers = [("Cache-Control", "no-store")]
        return response
    }

    // MARK: - Revocation, userinfo

    /// RFC 7009 §2.2: 200 whatever the token was; a refresh token takes its family's access tokens with it.
    func revoke(_ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        let form = form
        guard form["client_id"] == nil || form["client_id"] == configuration.clientID else {
            return oauthError("invalid_client", "unknown client_id", status: 401)
        }
        guard let token = form["token"] else { return oauthError("invalid_request", "token is missing") }
        if let grant = storage.refreshTokens.removeValue(forKey: token) {
            storage.revokedFamilies.insert(grant.family)
            storage.accessTokens = storage.accessTokens.filter { $0.value.family != grant.family }
        }
        storage.accessTokens[token] = nil
        return EmulatorResponse(status: 200, body: [], contentType: "text/plain")
    }

    /// OIDC Core §5.3 with a Bearer token (RFC 6750 §2.1).
    func userinfo(_ storage: DemoOpenIDState.Storage) -> EmulatorResponse {
        let header = request.headers["authorization"] ?? ""
        guard header.lowercased().hasPrefix("bearer "), let grant = storage.accessTokens[String(header.dropFirst(7))],
            now < grant.expiresAt,
            !(grant.family.map(storage.revokedFamilies.contains) ?? false)
        else {
            return EmulatorResponse(
                status: 401, body: [], contentType: "text/plain",
                headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        }
        let user = configuration.user
        var claims: [String: Any] = ["sub": user.subject]
        let scopes = grant.scope.split(separator: " ")
        if scopes.contains("profile") { claims.merge(["name": user.name, "preferred_username": user.username]) { $1 } }
        if scopes.contains("email") { claims.merge(["email": user.email, "email_verified": true]) { $1 } }
        return .json(claims)
    }

    // MARK: - Device authorization

    /// RFC 8628 §3.1–3.2.
    func deviceAuthorization(_ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        let form = form
        guard form["client_id"] == configuration.clientID else { return oauthError("invalid_client", "unknown client_id", status: 401) }
        let deviceCode = Encoding.randomToken(length: 40)
        let letters = Array("BCDFGHJKLMNPQRSTVWXZ")  // §6.1: no vowels, so no words
        let raw = String((0..<8).map { _ in letters.randomElement()! })
        let userCode = raw.prefix(4) + "-" + raw.suffix(4)
        storage.devices[deviceCode] = .init(
            userCode: String(userCode), scope: form["scope"] ?? "openid",
            expiresAt: now.addingTimeInterval(configuration.deviceCodeLifetime))
        let verification = storage.issuer + "/device"
        return .json([
            "device_code": deviceCode, "user_code": String(userCode), "verification_uri": verification,
            "verification_uri_complete": verification + "?user_code=" + userCode, "expires_in": Int(configuration.deviceCodeLifetime),
            "interval": configuration.deviceInterval,
        ])
    }

    /// The device page's form: the code shown by Latchkey, then the person's username and password.
    func approveDevice(_ storage: inout DemoOpenIDState.Storage) -> EmulatorResponse {
        let form = form
        let typed = (form["user_code"] ?? "").uppercased().filter { $0.isLetter }
        guard let entry = storage.devices.first(where: { $0.value.userCode.filter(\.isLetter) == typed && now < $0.value.expiresAt }) else {
            return DemoPages.device(userCode: form["user_code"] ?? "", problem: "No sign-in is waiting for that code.")
        }
        guard form["username"] == configuration.user.username, form["password"] == configuration.user.password else {
            return DemoPages.device(userCode: form["user_code"] ?? "", problem: "Wrong username or password.")
        }
        storage.devices[entry.key]?.approved = true
        return DemoPages.message("Device approved", "You can go back to Latchkey; it finishes the sign-in on its own.")
    }
}
