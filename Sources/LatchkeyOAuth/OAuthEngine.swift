public import Foundation
public import LatchkeyProviders
public import LatchkeySupport
public import LatchkeyVault

/// The OAuth 2.0 and OpenID Connect protocol against one provider's endpoints: discovery, code
/// exchange, ID token and userinfo checks, refresh, revocation and the device grant. It stores
/// nothing; `AccountService` does.
public struct OAuthEngine: Sendable {
    package let transport: any HTTPTransport
    package let clock: any WallClock
    /// Discovery documents and DPoP nonces from earlier requests, or earlier runs.
    let memory: any ServerMemory

    public init(transport: any HTTPTransport, clock: any WallClock = SystemClock(), memory: any ServerMemory = ProcessServerMemory()) {
        self.transport = transport
        self.clock = clock
        self.memory = memory
    }

    /// The clock's time: what expiry is measured against.
    public func now() -> Date { clock.now() }

    // MARK: - Discovery

    /// The provider's server metadata: discovery when the file does not list every endpoint,
    /// from `memory` while it is younger than a day unless `fresh` (a sign-in, or an endpoint
    /// that failed) asks for it anew. A remembered document is checked as a fetched one is.
    public func metadata(for provider: OAuthProvider, fresh: Bool = false) async throws -> ServerMetadata {
        guard let url = ServerMetadata.discoveryURL(for: provider) else {
            return try ServerMetadata.resolve(provider: provider, document: nil)
        }
        if !fresh, let kept = memory.discovery(at: url, now: now()),
            let document = try? JSONDecoder().decode(DiscoveryDocument.self, from: Data(kept)),
            let metadata = try? ServerMetadata.resolve(provider: provider, document: document)
        {
            return metadata
        }
        let response = try await transport.send(HTTPRequest(method: .get, url: url, headers: [("Accept", "application/json")]))
        guard response.status == 200 else {
            throw DiscoveryError.unreadableDocument(provider: provider.name, reason: "HTTP \(response.status) from \(url.absoluteString)")
        }
        let document: DiscoveryDocument
        do {
            document = try JSONDecoder().decode(DiscoveryDocument.self, from: Data(response.body))
        } catch {
            throw DiscoveryError.unreadableDocument(provider: provider.name, reason: "not the expected JSON")
        }
        let metadata = try ServerMetadata.resolve(provider: provider, document: document)
        memory.remember(discovery: response.body, at: url, now: now())
        return metadata
    }

    /// Runs `body` with `provider`'s metadata. When the metadata was remembered and `body` fails
    /// at an endpoint it named (the host is unreachable, or answers what no such endpoint would),
    /// the document is fetched again, and `body` runs once more if the endpoints changed.
    public func withMetadata<Result>(for provider: OAuthProvider, _ body: (ServerMetadata) async throws -> Result) async throws -> Result {
        let metadata = try await metadata(for: provider)
        do {
            return try await body(metadata)
        } catch  where Self.isEndpointFailure(error) {
            guard ServerMetadata.discoveryURL(for: provider) != nil else { throw error }
            let fresh = try await self.metadata(for: provider, fresh: true)
            guard fresh != metadata else { throw error }
            return try await body(fresh)
        }
    }

    /// A failure that a moved endpoint would cause, and after which the request was not taken:
    /// no connection, or an answer that is no OAuth answer at all. Not a time-out, after which a
    /// rotating refresh token may have been spent; not an OAuth error, which is the server speaking.
    static func isEndpointFailure(_ error: any Error) -> Bool {
        switch error {
        case TransportError.unreachable, TokenEndpointError.malformed: return true
        default: return false
        }
    }

    // MARK: - Authorization code

    /// Pushes the authorization request to the PAR endpoint (RFC 9126 §2) and returns it with the
    /// `request_uri` the browser carries instead. The key the tokens will be bound to goes as
    /// `dpop_jkt` among the parameters, not as a proof: glewlwyd refuses a proof there when it
    /// wants nonces, yet offers none (docs/decisions/par-dpop-step-up.md).
    public func push(_ pending: PendingAuthorization) async throws -> PendingAuthorization {
        guard let endpoint = pending.metadata.pushedAuthorizationRequestEndpoint else {
            throw ProtocolChoiceError.missingEndpoint(
                provider: pending.provider.name, field: "pushed_authorization_request_endpoint", key: "par")
        }
        let form = pending.parameters + clientAuthentication(pending.provider).filter { $0.0 != "client_id" }
        let response = try await transport.send(.form(endpoint, form))
        return pending.pushed(requestURI: try PushedAuthorizationResponse.parse(response).requestURI)
    }

    /// Exchanges a validated code (RFC 6749 §4.1.3, RFC 7636 §4.5) and identifies the account;
    /// with a DPoP key, the tokens are bound to it (RFC 9449 §5) and the record keeps it. A
    /// sign-in weaker or older than its step-up asked for is refused (OIDC Core §3.1.2.1).
    public func exchange(_ code: AuthorizationCode, for pending: PendingAuthorization) async throws -> AccountRecord {
        let provider = pending.provider
        let form =
            [
                ("grant_type", "authorization_code"), ("code", code.value.exposedValue),
                ("redirect_uri", pending.redirectURI), ("code_verifier", pending.pkce.verifier.exposedValue),
            ] + Self.resourceParameters(provider) + clientAuthentication(provider)
        let tokens = try await tokenRequest(pending.metadata.tokenEndpoint, form, proofKey: pending.dpopKey)
        var record = try await account(from: tokens, provider: provider, metadata: pending.metadata, nonce: pending.nonce)
        record.dpopKey = pending.dpopKey?.stored
        if let problem = pending.stepUp.problem(with: record, at: now()) { throw problem }
        return record
    }

    /// `resource` on every token request of the account's own tokens (the code exchange, the
    /// device grant's polls, each refresh) as on its authorization request (RFC 8707 §2.2), so
    /// the token is for the same API every time; an MCP server's authorization server is to be
    /// asked for its server on each of them (the MCP authorization specification, "Resource
    /// Parameter Implementation"). Sent when the sign-in names exactly one resource: RFC 8707
    /// makes the parameter optional at the token endpoint, a token for several is what the
    /// authorization request already granted, and glewlwyd refuses a token request naming more
    /// than one (`invalid_target`).
    static func resourceParameters(_ provider: OAuthProvider) -> [(String, String)] {
        provider.choices.resources.count == 1 ? provider.choices.resources.map { ("resource", $0) } : []
    }

    /// Builds the account record from a token response, verifying who signed in. `nonce` is the
    /// authorization request's (an ID token is then required); the device grant has none.
    func account(from tokens: TokenResponse, provider: OAuthProvider, metadata: ServerMetadata, nonce: Secret?) async throws
        -> AccountRecord
    {
        let identity = try await identity(from: tokens, provider: provider, metadata: metadata, nonce: nonce)
        let time = now()
        return AccountRecord(
            provider: provider.name, issuer: identity.issuer, subject: identity.subject, displayName: identity.displayName,
            accessToken: tokens.accessToken, tokenType: tokens.tokenType, refreshToken: tokens.refreshToken, idToken: tokens.idToken,
            expiresAt: AccountRecord.boundedExpiry(tokens.expiresIn.map { time.addingTimeInterval(TimeInterval($0)) }, at: time),
            scopes: tokens.scope.map { $0.split(separator: " ").map(String.init) } ?? provider.scopes,
            createdAt: time, updatedAt: time)
    }

    struct Identity {
        var issuer: String
        var subject: String
        var displayName: String?
    }

    private func identity(
        from tokens: TokenResponse, provider: OAuthProvider, metadata: ServerMetadata, nonce: Secret?
    ) async throws -> Identity {
        // Plain OAuth 2.0: who signed in comes from the userinfo endpoint, or, at a server that
        // has none, from the access token as far as it says (AccessTokenIdentity).
        guard provider.isOpenID else {
            guard metadata.userinfoEndpoint != nil else {
                return AccessTokenIdentity.identity(of: tokens.accessToken, issuer: Self.issuer(of: metadata))
            }
            return try await userinfoIdentity(accessToken: tokens.accessToken, provider: provider, metadata: metadata)
        }
        guard let idToken = tokens.idToken else {
            // The device grant is plain OAuth 2.0 (RFC 8628): OpenID Connect does not oblige a
            // provider to add an ID token there, so the issuer's userinfo names the account.
            if nonce == nil, metadata.userinfoEndpoint != nil {
                return try await userinfoIdentity(accessToken: tokens.accessToken, provider: provider, metadata: metadata)
            }
            throw TokenEndpointError.malformed(
                endpoint: "token endpoint", reason: "no id_token although the openid scope was requested")
        }
        var expected = try expectation(provider: provider, metadata: metadata, nonce: nonce)
        expected.accessToken = tokens.accessToken
        let claims = try await verify(idToken, expecting: expected)
        return Identity(issuer: claims.issuer, subject: claims.subject, displayName: claims.displayName)
    }

    /// What an OpenID provider's ID tokens must satisfy: its issuer, its client, its keys.
    func expectation(provider: OAuthProvider, metadata: ServerMetadata, nonce: Secret?) throws(DiscoveryError) -> IDTokenExpectation {
        guard let issuer = metadata.issuer, let jwksURI = metadata.jwksURI else {
            throw .missingEndpoint(provider: provider.name, field: metadata.issuer == nil ? "issuer" : "jwks_uri")
        }
        return IDTokenExpectation(issuer: issuer, audience: provider.clientID, jwksURI: jwksURI, nonce: nonce)
    }

    /// Verifies an ID token, fetching the JWKS again once if the key is unknown (key rotation).
    public func verify(_ idToken: Secret, expecting expectation: IDTokenExpectation) async throws -> IDTokenClaims {
        let verifier = IDTokenVerifier(issuer: expectation.issuer, clientID: expectation.audience)
        var keys = try await keySet(expectation.jwksURI)
        do {
            return try verifier.verify(idToken, keys: keys, nonce: expectation.nonce, accessToken: expectation.accessToken, now: now())
        } catch .unknownKey {
            keys = try await keySet(expectation.jwksURI)
            return try verifier.verify(idToken, keys: keys, nonce: expectation.nonce, accessToken: expectation.accessToken, now: now())
        }
    }

    private func keySet(_ url: URL) async throws -> JSONWebKeySet {
        let response = try await transport.send(HTTPRequest(method: .get, url: url, headers: [("Accept", "application/json")]))
        guard response.status == 200 else { throw IDTokenError.unreadableKeySet("HTTP \(response.status)") }
        return try JSONWebKeySet(json: response.body)
    }

    /// For plain OAuth 2.0: who signed in, from the userinfo endpoint.
    private func userinfoIdentity(accessToken: Secret, provider: OAuthProvider, metadata: ServerMetadata) async throws -> Identity {
        let fields = provider.accountFields
        guard let endpoint = metadata.userinfoEndpoint else {
            throw DiscoveryError.missingEndpoint(provider: provider.name, field: "userinfo_endpoint")
        }
        let response = try await transport.send(
            HTTPRequest(
                method: .get, url: endpoint,
                headers: [("Authorization", "Bearer \(accessToken.exposedValue)"), ("Accept", "application/json")]))
        guard response.status == 200, let userinfo = try? JSONDecoder().decode(UserinfoResponse.self, from: Data(response.body)) else {
            throw UserinfoError.unusable(provider: provider.name, reason: "HTTP \(response.status) or not a JSON object")
        }
        let account = userinfo.account(idField: fields.id, nameField: fields.name)
        guard let subject = account.subject else {
            throw UserinfoError.unusable(provider: provider.name, reason: "no \"\(fields.id)\" member (account_id_field)")
        }
        return Identity(issuer: Self.issuer(of: metadata), subject: subject, displayName: account.displayName)
    }

    /// The issuer a plain OAuth 2.0 account is kept under: the metadata's, else the token
    /// endpoint's origin (a provider file listing its endpoints need not name an issuer).
    static func issuer(of metadata: ServerMetadata) -> String {
        metadata.issuer ?? origin(of: metadata.tokenEndpoint)
    }

    static func origin(of url: URL) -> String {
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        return components.string ?? url.absoluteString
    }

    // MARK: - Refresh and revocation

    /// Refreshes `record` (RFC 6749 §6). A rotated refresh token replaces the old one; a new ID
    /// token must name the same account (OIDC Core §12.2), which `applying` checks.
    public func refresh(_ record: AccountRecord, provider: OAuthProvider, metadata: ServerMetadata) async throws -> AccountRecord {
        let tokens = try await refreshGrant(record, provider: provider, metadata: metadata, extra: Self.resourceParameters(provider))
        let time = now()
        var update = TokenUpdate(
            accessToken: tokens.accessToken, tokenType: tokens.tokenType, refreshToken: tokens.refreshToken, idToken: nil,
            expiresAt: tokens.expiresIn.map { time.addingTimeInterval(TimeInterval($0)) },
            scopes: tokens.scope.map { $0.split(separator: " ").map(String.init) })
        if let idToken = tokens.idToken, provider.isOpenID {
            var expected = try expectation(provider: provider, metadata: metadata, nonce: nil)
            expected.accessToken = tokens.accessToken
            let claims = try await verify(idToken, expecting: expected)
            update.idToken = idToken
            update.identity = TokenSubject(issuer: claims.issuer, subject: claims.subject)
            update.displayName = claims.displayName
        }
        return try record.applying(update, at: time)
    }

    /// Revokes the refresh token, or the access token when there is none (RFC 7009 §2.1).
    ///
    /// A public client has no credentials to authenticate the request with; some servers
    /// (glewlwyd) answer 401 and want the access token as a Bearer credential instead, so a 401
    /// is retried once that way.
    public func revoke(_ record: AccountRecord, provider: OAuthProvider, metadata: ServerMetadata) async throws -> RevocationOutcome {
        guard let endpoint = metadata.revocationEndpoint else { return .unsupported }
        let (token, hint) = record.refreshToken.map { ($0, "refresh_token") } ?? (record.accessToken, "access_token")
        let form = [("token", token.exposedValue), ("token_type_hint", hint)] + clientAuthentication(provider)
        var response = try await transport.send(.form(endpoint, form))
        if response.status == 401 && provider.clientSecret == nil {
            response = try await transport.send(
                .form(endpoint, form, headers: [("Authorization", "Bearer \(record.accessToken.exposedValue)")]))
        }
        guard response.status == 200 else {
            // RFC 7009 §2.2.1: errors use the RFC 6749 §5.2 shape.
            if let error = OAuthErrorResponse(body: response.body) {
                throw TokenEndpointError.oauth(endpoint: "revocation endpoint", error)
            }
            throw TokenEndpointError.malformed(endpoint: "revocation endpoint", reason: "HTTP \(response.status)")
        }
        return .revoked(hint)
    }

    /// A token for `narrowing` from `record`'s refresh token: `resource` (RFC 8707 §2.2) and a
    /// narrower `scope` (RFC 6749 §6) on a refresh request. The account's own access token stays
    /// as it is; a rotated refresh token comes back, to replace the account's. A machine identity
    /// has no refresh token: its narrowed token is a client credentials grant for them.
    public func narrowedToken(
        _ record: AccountRecord, _ narrowing: TokenNarrowing, provider: OAuthProvider, metadata: ServerMetadata
    ) async throws -> (NarrowedToken, rotatedRefreshToken: Secret?) {
        let tokens: TokenResponse
        if provider.choices.grant == .clientCredentials {
            let scopes = narrowing.scopes.isEmpty ? record.scopes.filter { $0 != "openid" } : narrowing.scopes
            tokens = try await clientCredentialsGrant(
                provider, metadata: metadata, proofKey: try proofKey(of: record), scopes: scopes, resource: narrowing.resource)
        } else {
            var extra: [(String, String)] = []
            if let resource = narrowing.resource { extra.append(("resource", resource)) }
            if !narrowing.scopes.isEmpty { extra.append(("scope", narrowing.scopes.joined(separator: " "))) }
            tokens = try await refreshGrant(record, provider: provider, metadata: metadata, extra: extra)
        }
        let time = now()
        let token = NarrowedToken(
            resource: narrowing.resource, scopes: narrowing.scopes, accessToken: tokens.accessToken, tokenType: tokens.tokenType,
            expiresAt: tokens.expiresIn.map { time.addingTimeInterval(TimeInterval($0)) }, issuedAt: time)
        return (token, tokens.refreshToken)
    }

    /// The refresh grant's answer for `record` (RFC 6749 §6), with `extra` parameters; a
    /// DPoP-bound account proves its key, and one that lost it is refused before anything is sent.
    func refreshGrant(
        _ record: AccountRecord, provider: OAuthProvider, metadata: ServerMetadata, extra: [(String, String)] = []
    ) async throws -> TokenResponse {
        guard let refreshToken = record.refreshToken else {
            throw RefreshError.noRefreshToken(account: record.label, provider: record.provider)
        }
        let form =
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken.exposedValue)] + extra + clientAuthentication(provider)
        return try await tokenRequest(metadata.tokenEndpoint, form, proofKey: try proofKey(of: record))
    }

    /// The DPoP key `record`'s tokens are bound to; `nil` for bearer tokens.
    public func proofKey(of record: AccountRecord) throws(DPoPError) -> DPoPKey? {
        if let stored = record.dpopKey { return try DPoPKey(stored: stored) }
        guard !record.isProofBound else { throw .missingKey(account: record.label, provider: record.provider) }
        return nil
    }

    // MARK: - Shared pieces

    /// `client_id`, plus `client_secret` (client_secret_post) for the providers that hand one out.
    func clientAuthentication(_ provider: OAuthProvider) -> [(String, String)] {
        var pairs = [("client_id", provider.clientID)]
        if let secret = provider.clientSecret { pairs.append(("client_secret", secret.exposedValue)) }
        return pairs
    }

    /// A token endpoint request. With `proofKey` it carries a DPoP proof; a `use_dpop_nonce`
    /// answer with a `DPoP-Nonce` is retried once with that nonce and a new proof (RFC 9449 §8),
    /// and a second one is the error.
    func tokenRequest(_ endpoint: URL, _ form: [(String, String)], proofKey: DPoPKey? = nil) async throws -> TokenResponse {
        try await tokenRequest(endpoint, proofKey: proofKey) { form }
    }

    /// `tokenRequest(_:_:proofKey:)` with the form built anew for each request sent, for forms
    /// holding something single-use (a client assertion, RFC 7523 §3).
    func tokenRequest(_ endpoint: URL, proofKey: DPoPKey?, form: () throws -> [(String, String)]) async throws -> TokenResponse {
        func send(nonce: String?) async throws -> HTTPResponse {
            let proof = proofKey.map { [("DPoP", $0.proof(method: "POST", url: endpoint, at: now(), nonce: nonce))] } ?? []
            let response = try await transport.send(.form(endpoint, try form(), headers: proof))
            // Each answer may carry the nonce the next proof needs (RFC 9449 §8.2).
            if proofKey != nil, let next = DPoPNonce.offered(by: response) { memory.remember(nonce: next, for: endpoint) }
            return response
        }
        // The nonce this server gave last, in memory or from an earlier run: one round trip, not two.
        var response = try await send(nonce: proofKey == nil ? nil : memory.nonce(for: endpoint))
        if proofKey != nil, let nonce = DPoPNonce.requested(by: response) {
            response = try await send(nonce: nonce)
        }
        return try TokenResponse.parse(response, endpoint: "token endpoint")
    }
}

// MARK: - Device authorization grant

extension OAuthEngine {
    /// Starts the device grant (RFC 8628 §3.1).
    public func startDeviceAuthorization(provider: OAuthProvider, metadata: ServerMetadata) async throws -> DeviceAuthorization {
        guard let endpoint = metadata.deviceAuthorizationEndpoint else { throw DeviceFlowError.unsupported(provider: provider.name) }
        let response = try await transport.send(
            .form(
                endpoint,
                [("scope", provider.scopes.joined(separator: " "))] + Self.resourceParameters(provider) + clientAuthentication(provider)))
        return try DeviceAuthorization.parse(response)
    }

    /// Polls until the person approves, denies or the code expires; returns the signed-in account.
    public func completeDeviceAuthorization(
        _ authorization: DeviceAuthorization, provider: OAuthProvider, metadata: ServerMetadata
    ) async throws -> AccountRecord {
        var poller = DevicePoller(authorization: authorization, startedAt: now())
        var action = DevicePoller.Action.wait(seconds: authorization.interval)
        while true {
            switch action {
            case .wait(let seconds):
                try await clock.sleep(for: .seconds(seconds))
                switch try await pollOnce(authorization, provider: provider, metadata: metadata) {
                case .answered(let result): action = poller.handle(result, now: now())
                case .unreachable(let reason): action = poller.unreachable(reason, now: now())
                }
            case .finished(let tokens):
                return try await account(from: tokens, provider: provider, metadata: metadata, nonce: nil)
            case .failed(let error):
                throw error
            }
        }
    }

    /// What one poll of the token endpoint came to.
    private enum Poll {
        case answered(Result<TokenResponse, TokenEndpointError>)
        /// The network failed: polling goes on until the code expires.
        case unreachable(String)
    }

    private func pollOnce(
        _ authorization: DeviceAuthorization, provider: OAuthProvider, metadata: ServerMetadata
    ) async throws -> Poll {
        let form =
            [
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ("device_code", authorization.deviceCode.exposedValue),
            ] + Self.resourceParameters(provider) + clientAuthentication(provider)
        let response: HTTPResponse
        do {
            response = try await transport.send(.form(metadata.tokenEndpoint, form))
        } catch  where error.category == .unavailable {
            return .unreachable(error.description)
        }
        do {
            return .answered(.success(try TokenResponse.parse(response, endpoint: "token endpoint")))
        } catch {
            return .answered(.failure(error))
        }
    }
}
