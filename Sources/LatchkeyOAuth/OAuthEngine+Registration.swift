import Foundation
import LatchkeyEssentials
public import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault

// MARK: - Dynamic client registration

extension OAuthEngine {
    /// What a registration came to: the client to keep, and what the server got wrong on the way
    /// (`correction`), when it took a second try.
    public struct Registration: Sendable {
        public var client: RegisteredClient
        public var correction: String?
    }

    /// Registers Latchkey as a native public client (RFC 7591 §3.1) at `redirectURIs` and makes
    /// sure the client works before it is kept: the answer must not make it confidential, and the
    /// token endpoint must take its `client_id` alone, as a public client's code exchange sends
    /// it. A client that fails is deleted (RFC 7592 §2.3) and registered once more with
    /// glewlwyd's `client_confidential: false`; a second failure is the error.
    ///
    /// Where the server has a device authorization endpoint, the device grant is asked for too;
    /// a server that refuses the registration then (glewlwyd knows the grant only by a name of
    /// its own) is asked again without it, and the client is kept as one that signs in at the
    /// loopback redirect only (`grantsDeviceCode` false).
    public func register(provider: OAuthProvider, metadata: ServerMetadata, redirectURIs: [String]) async throws -> Registration {
        guard let endpoint = metadata.registrationEndpoint else { throw ClientRegistrationError.noEndpoint(provider: provider.name) }
        var leftBehind: [String] = []
        var withDeviceGrant = metadata.deviceAuthorizationEndpoint != nil
        var corrections: [String] = []
        func attempt(assertingPublic: Bool) async throws -> (RegisteredClient, problem: String?) {
            let answer: ClientRegistrationResponse
            do {
                answer = try await send(
                    provider, redirectURIs, to: endpoint, assertingPublic: assertingPublic, withDeviceGrant: withDeviceGrant)
            } catch TokenEndpointError.oauth(_, let refusal) where withDeviceGrant {
                withDeviceGrant = false
                corrections.append(
                    "it refused a registration asking for the device grant too (\(TerminalText.sanitized(refusal.error, maxLength: 40))); registered for the browser sign-in only, so `--device` cannot be used with it"
                )
                answer = try await send(provider, redirectURIs, to: endpoint, assertingPublic: assertingPublic, withDeviceGrant: false)
            }
            let client = RegisteredClient(
                provider: provider.name, registrationEndpoint: endpoint.absoluteString, redirectURIs: redirectURIs,
                clientID: answer.clientID, registrationAccessToken: answer.registrationAccessToken,
                registrationClientURI: answer.registrationClientURI?.absoluteString, registeredAt: now(),
                grantsDeviceCode: metadata.deviceAuthorizationEndpoint == nil ? nil : withDeviceGrant)
            var problem = answer.confidentialityProblem
            if problem == nil { problem = try await publicClientProblem(client, metadata: metadata) }
            if problem != nil, (try? await deleteRegistration(client)) != .deleted { leftBehind.append(client.clientID) }
            return (client, problem)
        }
        let (first, problem) = try await attempt(assertingPublic: false)
        guard let problem else {
            return Registration(client: first, correction: corrections.isEmpty ? nil : corrections.joined(separator: "; "))
        }
        let (second, stillWrong) = try await attempt(assertingPublic: true)
        if let stillWrong {
            throw ClientRegistrationError.notPublic(provider: provider.name, problem: stillWrong, leftBehind: leftBehind)
        }
        corrections.append("\(problem); registered again with client_confidential: false, which the server took as a public client")
        return Registration(client: second, correction: corrections.joined(separator: "; "))
    }

    /// One registration request and its answer, read strictly.
    private func send(
        _ provider: OAuthProvider, _ redirectURIs: [String], to endpoint: URL, assertingPublic: Bool, withDeviceGrant: Bool
    ) async throws -> ClientRegistrationResponse {
        let request = ClientRegistrationRequest(
            provider: provider, redirectURIs: redirectURIs, assertingPublic: assertingPublic, withDeviceGrant: withDeviceGrant)
        return try ClientRegistrationResponse.parse(try await transport.send(.json(endpoint, request.body)), from: endpoint)
    }

    /// Whether the token endpoint refuses `client` as a public client: a code exchange with only
    /// its `client_id` and a code nobody issued must fail on the code (`invalid_grant`, or
    /// glewlwyd's `invalid_code`), not on the client (`invalid_client`, `unauthorized_client`).
    func publicClientProblem(_ client: RegisteredClient, metadata: ServerMetadata) async throws -> String? {
        let form = [
            ("grant_type", "authorization_code"), ("code", "latchkey-registration-check-\(UUID().uuidString)"),
            ("redirect_uri", client.redirectURIs.first ?? ""), ("code_verifier", PKCE().verifier.exposedValue),
            ("client_id", client.clientID),
        ]
        let response = try await transport.send(.form(metadata.tokenEndpoint, form))
        guard let error = OAuthErrorResponse(body: response.body) else {
            if response.status == 200 { return "its token endpoint accepted an authorization code it never issued" }
            return "its token endpoint answered HTTP \(response.status) without an OAuth error to the new client_id alone"
        }
        guard ["invalid_client", "unauthorized_client"].contains(error.error) else { return nil }
        return
            "it registered a confidential client although token_endpoint_auth_method \"none\" (a public client) was asked for: its token endpoint answered \(TerminalText.sanitized(error.error, maxLength: 40)) to the new client_id alone"
    }

    /// What deleting a registration came to.
    public enum RegistrationDeletion: Sendable, Equatable {
        case deleted
        /// The server gave no `registration_client_uri` or token: it does not offer RFC 7592.
        case unsupported
    }

    /// Deletes `client`'s registration (RFC 7592 §2.3) with its registration access token.
    public func deleteRegistration(_ client: RegisteredClient) async throws -> RegistrationDeletion {
        guard let uri = client.registrationClientURI.flatMap(URL.init(string:)), let token = client.registrationAccessToken else {
            return .unsupported
        }
        let response = try await transport.send(
            HTTPRequest(method: .delete, url: uri, headers: [("Authorization", "Bearer \(token.exposedValue)")]))
        guard response.status == 204 || response.status == 200 else {
            let endpoint = "client configuration endpoint"
            if let error = OAuthErrorResponse(body: response.body) { throw TokenEndpointError.oauth(endpoint: endpoint, error) }
            throw TokenEndpointError.malformed(endpoint: endpoint, reason: "HTTP \(response.status) to the deletion of the registration")
        }
        return .deleted
    }
}

extension OAuthProvider {
    /// The redirect URIs a registration lists: one per `loopback_port`, or the one without a
    /// port, which servers following RFC 8252 §7.3 match at any port.
    public var registeredRedirectURIs: [String] {
        guard !client.loopbackPorts.isEmpty else { return ["http://\(client.loopbackHost.rawValue)\(client.redirectPath)"] }
        return client.loopbackPorts.map(redirectURI(port:))
    }
}
