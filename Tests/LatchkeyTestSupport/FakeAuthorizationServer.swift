public import Foundation
public import LatchkeyAccounts
import LatchkeyCrypto
public import LatchkeyKeystore
public import LatchkeyOAuth
public import LatchkeyProviders
import LatchkeySupport
import LatchkeyVault
import Synchronization

/// An OpenID provider played in memory: it answers the token, JWKS, revocation and userinfo
/// endpoints through a `RecordingTransport`, and "the person" approves every authorization the
/// browser is sent to, coming back through a `ScriptedListenerFactory`.
///
/// It checks what a real server checks (the code it issued, the PKCE verifier against the
/// challenge, the redirect URI, the refresh token it last issued, a pushed request used once, the
/// DPoP nonce it asked for), so the engine's requests are tested, not only its parsing. Its
/// transport's routes hold it, so it lives as long as any service built on it.
public final class FakeAuthorizationServer: Sendable {
    public let issuer: TestIssuer
    public let provider: Provider
    public let transport: RecordingTransport
    public let browser = FakeBrowser()
    public let clock: FixedClock

    struct State {
        var subject = "alice"
        var issuer: TestIssuer
        /// code → (code_challenge, redirect_uri, nonce, the last `resource`)
        var codes: [String: (challenge: String, redirectURI: String, nonce: String?, resource: String?)] = [:]
        /// Like glewlwyd: a refresh may name only the resource the sign-in named last, else
        /// `invalid_target`; `grantResource` is that of the current refresh token.
        var onlySignedInResources = false
        var grantResource: String?
        var refreshToken = "refresh-1"
        var issued = 0
        var revoked: [String] = []
        var accessTokenLifetime = 3600
        /// Whether ID tokens carry `at_hash`, and whether it is the right one.
        var accessTokenHash: AccessTokenHash = .absent
        /// A key set from before a rotation, served once (a cache in front of the JWKS).
        var staleKeySet: String?
        /// Pushed authorization requests (RFC 9126) by `request_uri`, each usable once.
        var pushed: [String: [String: String]] = [:]
        /// The nonce DPoP proofs must carry at the token endpoint (RFC 9449 §8), if any.
        var dpopNonce: String?
        /// `acr` and `auth_time` for the ID tokens it issues from now on (OIDC Core §2).
        var acr: String?
        var authTime: Date?
        /// Clients registered at `/register` (RFC 7591): client ID → whether it is confidential,
        /// and its registration access token.
        var registered: [String: (confidential: Bool, token: String)] = [:]
        /// The bodies sent to `/register`.
        var registrationRequests: [[UInt8]] = []
        var deletedRegistrations: [String] = []
        var registration = Registration.publicClients
    }

    /// How `/register` treats a request for a public client.
    public enum Registration: Sendable {
        case publicClients
        /// glewlwyd's way: confidential unless `client_confidential: false` comes too.
        case confidentialUnlessAsserted
        /// Confidential whatever is asked.
        case alwaysConfidential
        /// Refused with an RFC 7591 §3.2.2 error.
        case refused
        /// Public clients, but a request naming a grant type other than the code and refresh
        /// grants is refused, as glewlwyd refuses RFC 8628's (it knows the grant by a name of its own).
        case codeAndRefreshGrantsOnly
    }

    private let state: Mutex<State>

    /// `discovery`: extra members of a discovery document the provider is then configured to
    /// read (JSON members, such as `"pushed_authorization_request_endpoint":"…"`); `nil` gives the
    /// provider every endpoint in its file and no discovery. `choices` are the provider file's.
    public init(
        name: String = "corp", issuer: String = "https://corp.example", transport: RecordingTransport = RecordingTransport(),
        clock: FixedClock = FixedClock(), discovery: String? = nil, choices: ProtocolChoices = ProtocolChoices()
    ) {
        let signer = TestIssuer(issuer: issuer)
        self.issuer = signer
        self.transport = transport
        self.clock = clock
        state = Mutex(State(issuer: signer))
        let endpoints = OAuthClient.Endpoints(
            authorization: URL(string: issuer + "/authorize"), token: URL(string: issuer + "/token"),
            revocation: URL(string: issuer + "/revoke"), deviceAuthorization: URL(string: issuer + "/device"),
            userinfo: URL(string: issuer + "/userinfo"), jwks: URL(string: issuer + "/jwks"))
        provider = Provider.testing(
            name: name, issuer: issuer, endpoints: discovery == nil ? endpoints : OAuthClient.Endpoints(), choices: choices)
        if let discovery {
            transport.route(
                "/.well-known/openid-configuration",
                json: """
                    {"issuer":"\(issuer)","authorization_endpoint":"\(issuer)/authorize","token_endpoint":"\(issuer)/token",\
                    "revocation_endpoint":"\(issuer)/revoke","jwks_uri":"\(issuer)/jwks",\(discovery)}
                    """)
        }
        transport.route("/par") { [self] request in .success(push(request)) }
        transport.route("/jwks") { [self] _ in
            .success(
                Self.json(
                    state.withLock { state in
                        defer { state.staleKeySet = nil }
                        return state.staleKeySet ?? state.issuer.keySetJSON
                    }))
        }
        transport.route("/token") { [self] request in .success(token(request)) }
        transport.route("/register") { [self] request in .success(register(request)) }
        // Routes cannot be added while a request is answered, so the first few clients' are here.
        for number in 1...4 {
            transport.route("/register/registered-\(number)") { [self] request in
                .success(deleteRegistration(request, id: "registered-\(number)"))
            }
        }
        transport.route(
            "/device",
            json: #"{"device_code":"dc-1","user_code":"WDJB-MJHT","verification_uri":"\#(issuer)/activate","expires_in":60,"interval":5}"#)
        transport.route("/revoke") { [self] request in
            state.withLock { $0.revoked.append(request.form["token"] ?? "") }
            return .success(HTTPResponse(status: 200, body: []))
        }
    }

    /// The account the person signs in as from now on (an identity change when it differs).
    public func signInAs(_ subject: String) { state.withLock { $0.subject = subject } }
    /// Rotates the signing key: tokens are signed with the new one and the JWKS lists only it,
    /// except that the next JWKS request still gets the old set (a stale cache).
    public func rotateKey() {
        state.withLock {
            $0.staleKeySet = $0.issuer.keySetJSON
            $0.issuer = $0.issuer.rotated
        }
    }
    public func accessTokenLifetime(_ seconds: Int) { state.withLock { $0.accessTokenLifetime = seconds } }

    /// What the ID tokens say about the access token issued with them (OIDC Core §3.1.3.6).
    public enum AccessTokenHash: Sendable {
        case absent
        case matching
        /// The hash of another access token: a server (or someone in between) pairing tokens wrongly.
        case ofAnotherToken
    }

    public func accessTokenHash(_ hash: AccessTokenHash) { state.withLock { $0.accessTokenHash = hash } }
    public var revokedTokens: [String] { state.withLock { $0.revoked } }
    /// From now on, DPoP proofs at the token endpoint must carry `nonce`.
    public func requireDPoPNonce(_ nonce: String) { state.withLock { $0.dpopNonce = nonce } }
    public var currentRefreshToken: String { state.withLock { $0.refreshToken } }
    /// From now on, as glewlwyd: a refresh naming a resource other than the one the sign-in named
    /// last is answered `invalid_target`.
    public func acceptOnlySignedInResources() { state.withLock { $0.onlySignedInResources = true } }
    /// How `/register` answers from now on.
    public func registration(_ registration: Registration) { state.withLock { $0.registration = registration } }
    /// The JSON bodies sent to `/register`, in order.
    public var registrationRequests: [[String: Any]] {
        state.withLock { $0.registrationRequests }.map { (try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]) ?? [:] }
    }
    /// The client IDs whose registration was deleted (RFC 7592), in order.
    public var deletedRegistrations: [String] { state.withLock { $0.deletedRegistrations } }
    /// The `acr` and `auth_time` the next ID tokens carry.
    public func authenticate(acr: String?, at time: Date?) {
        state.withLock {
            $0.acr = acr
            $0.authTime = time
        }
    }

    /// Listeners whose request is the person coming back from approving at the authorization URL.
    public var listeners: ScriptedListenerFactory {
        ScriptedListenerFactory(browser: browser) { [self] url in approve(url) }
    }

    /// What the services of one test remember of this server from one "run" to the next, as
    /// `ServerMemoryDirectory` does between processes.
    public let memory = ProcessServerMemory()

    /// An account service with this server's seams and `keystore`.
    public func service(keystore: any Keystore, providers: [Provider]? = nil) -> AccountService {
        AccountService(
            catalog: ProviderCatalog(providers: providers ?? [provider], errors: []), keystore: keystore,
            engine: OAuthEngine(transport: transport, clock: clock, memory: memory), browser: browser, listeners: listeners)
    }

    // MARK: - Endpoints

    /// The redirect the browser makes after the person approves: code and state, plus `iss`.
    public func approve(_ authorizationURL: URL) -> RedirectRequest? {
        var query = Self.query(authorizationURL)
        if let requestURI = query["request_uri"] {
            guard let pushed = state.withLock({ $0.pushed.removeValue(forKey: requestURI) }), pushed["client_id"] == query["client_id"]
            else {
                return nil
            }
            query = pushed
        }
        guard let redirect = query["redirect_uri"].flatMap(URLComponents.init(string:)), let state = query["state"] else { return nil }
        let code = "code-\(UUID().uuidString)"
        self.state.withLock {
            $0.codes[code] = (query["code_challenge"] ?? "", query["redirect_uri"] ?? "", query["nonce"], query["resource"])
        }
        let issuer = self.issuer.issuer.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return RedirectRequest(
            target: "\(redirect.path)?code=\(code)&state=\(state)&iss=\(issuer)", host: "\(redirect.host ?? ""):\(redirect.port ?? 0)")
    }

    /// The PAR endpoint: the request is kept for one use under a new `request_uri`.
    private func push(_ request: HTTPRequest) -> HTTPResponse {
        let form = request.form
        guard form["request_uri"] == nil, form["client_id"] != nil else { return Self.json(#"{"error":"invalid_request"}"#, status: 400) }
        return state.withLock { state in
            let requestURI = "urn:ietf:params:oauth:request_uri:\(state.pushed.count + state.issued)-\(UUID().uuidString)"
            state.pushed[requestURI] = form
            return Self.json(#"{"request_uri":"\#(requestURI)","expires_in":60}"#, status: 201)
        }
    }

    /// The registration endpoint (RFC 7591 §3): each client gets a configuration endpoint that
    /// deletes it with its registration access token (RFC 7592 §2.3), `deleteRegistration`.
    private func register(_ request: HTTPRequest) -> HTTPResponse {
        let body = (try? JSONSerialization.jsonObject(with: Data(request.body ?? [])) as? [String: Any]) ?? [:]
        let assertsPublic = body["client_confidential"] as? Bool == false
        let answer: (id: String, token: String)? = state.withLock { state in
            state.registrationRequests.append(request.body ?? [])
            let confidential: Bool
            switch state.registration {
            case .refused: return nil
            case .codeAndRefreshGrantsOnly:
                guard Set(body["grant_types"] as? [String] ?? []).isSubset(of: ["authorization_code", "refresh_token"]) else { return nil }
                confidential = false
            case .publicClients: confidential = false
            case .confidentialUnlessAsserted: confidential = !assertsPublic
            case .alwaysConfidential: confidential = true
            }
            let id = "registered-\(state.registrationRequests.count)"
            let token = "fake-registration-token-\(state.registrationRequests.count)"
            state.registered[id] = (confidential, token)
            return (id, token)
        }
        guard let (id, token) = answer else {
            return Self.json(#"{"error":"invalid_client_metadata","error_description":"registration is closed"}"#, status: 400)
        }
        let redirectURIs = (body["redirect_uris"] as? [String] ?? []).map { "\"\($0)\"" }.joined(separator: ",")
        return Self.json(
            """
            {"client_id":"\(id)","registration_access_token":"\(token)","registration_client_uri":"\(issuer.issuer)/register/\(id)",\
            "token_endpoint_auth_method":"none","redirect_uris":[\(redirectURIs)],"client_id_issued_at":1750000000}
            """, status: 201)
    }

    /// A client configuration endpoint (RFC 7592 §2.3): DELETE with the registration access token.
    private func deleteRegistration(_ request: HTTPRequest, id: String) -> HTTPResponse {
        state.withLock { state in
            guard request.method == .delete, let token = state.registered[id]?.token,
                request.header("Authorization") == "Bearer \(token)"
            else {
                return HTTPResponse(status: 401, body: [])
            }
            state.registered[id] = nil
            state.deletedRegistrations.append(id)
            return HTTPResponse(status: 204, body: [])
        }
    }

    private func token(_ request: HTTPRequest) -> HTTPResponse {
        let form = request.form
        let clientID = form["client_id"] ?? ""
        if state.withLock({ $0.registered[clientID]?.confidential == true }) {
            return Self.json(#"{"error":"unauthorized_client"}"#, status: 403)
        }
        let proof = request.header("DPoP").flatMap(Self.claims(ofJWT:))
        let expectedNonce = state.withLock { $0.dpopNonce }
        if let expectedNonce, proof != nil, proof?["nonce"] as? String != expectedNonce {
            var answer = Self.json(#"{"error":"use_dpop_nonce","error_description":"send the nonce"}"#, status: 400)
            answer.headers.append(("DPoP-Nonce", expectedNonce))
            return answer
        }
        return state.withLock { state in
            switch form["grant_type"] {
            case "authorization_code":
                guard let code = form["code"], let issued = state.codes.removeValue(forKey: code) else {
                    return Self.json(#"{"error":"invalid_grant"}"#, status: 400)
                }
                let challenge = TestIssuer.base64URL(SHA256.hash(data: Array((form["code_verifier"] ?? "").utf8)))
                guard challenge == issued.challenge, form["redirect_uri"] == issued.redirectURI else {
                    return Self.json(#"{"error":"invalid_grant","error_description":"PKCE or redirect_uri mismatch"}"#, status: 400)
                }
                state.grantResource = issued.resource
                return tokens(&state, clientID: clientID, nonce: issued.nonce, bound: proof != nil)
            case "refresh_token":
                guard form["refresh_token"] == state.refreshToken else { return Self.json(#"{"error":"invalid_grant"}"#, status: 400) }
                if state.onlySignedInResources, let resource = form["resource"], resource != state.grantResource {
                    return Self.json(#"{"error":"invalid_target"}"#, status: 400)
                }
                return tokens(&state, clientID: clientID, nonce: nil, bound: proof != nil)
            default:
                return Self.json(#"{"error":"unsupported_grant_type"}"#, status: 400)
            }
        }
    }

    /// A token response with a new access token, a rotated refresh token and an ID token.
    private func tokens(_ state: inout State, clientID: String, nonce: String?, bound: Bool) -> HTTPResponse {
        state.issued += 1
        state.refreshToken = "refresh-\(state.issued + 1)"
        let accessToken = "access-\(state.issued)"
        var extra: [String: Any] = [:]
        switch state.accessTokenHash {
        case .absent: break
        case .matching: extra["at_hash"] = Self.leftHalfSHA256(accessToken)
        case .ofAnotherToken: extra["at_hash"] = Self.leftHalfSHA256("access-of-someone-else")
        }
        if let acr = state.acr { extra["acr"] = acr }
        if let authTime = state.authTime { extra["auth_time"] = Int(authTime.timeIntervalSince1970) }
        let idToken = state.issuer.idToken(subject: state.subject, audience: clientID, nonce: nonce, now: clock.now(), extra: extra)
        return Self.json(
            """
            {"access_token":"\(accessToken)","token_type":"\(bound ? "DPoP" : "Bearer")","expires_in":\(state.accessTokenLifetime),\
            "refresh_token":"\(state.refreshToken)","id_token":"\(idToken.exposedValue)"}
            """)
    }

    /// RS256's `at_hash`: the left half of SHA-256, base64url.
    static func leftHalfSHA256(_ text: String) -> String {
        TestIssuer.base64URL(Array(SHA256.hash(data: Array(text.utf8))).prefix(16))
    }

    /// The claims of a compact JWS, unverified (the fake only reads what the client sent).
    /// Discovery members that offer DPoP with ES256 (RFC 9449 §5.1), for `init(discovery:)`.
    public static let advertisesES256 = #""dpop_signing_alg_values_supported":["RS256","ES256"]"#

    public static func claims(ofJWT jwt: String) -> [String: Any]? {
        let parts = jwt.split(separator: ".")
        guard parts.count == 3, let data = TestIssuer.base64URLDecode(String(parts[1])) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    /// The JOSE header of a compact JWS.
    public static func header(ofJWT jwt: String) -> [String: Any]? {
        guard let first = jwt.split(separator: ".").first, let data = TestIssuer.base64URLDecode(String(first)) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    static func json(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }

    /// Every query item of `url`, in order, repeats included.
    public static func queryItems(_ url: URL) -> [URLQueryItem] {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
    }

    public static func query(_ url: URL) -> [String: String] {
        var values: [String: String] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] { values[item.name] = item.value }
        return values
    }
}
