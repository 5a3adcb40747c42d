public import Foundation
import LatchkeyEssentials
public import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault

/// The endpoints and promises of one authorization server, from discovery (OIDC Discovery §3,
/// RFC 8414 §2) with the provider file's explicit endpoints laid over it.
public struct ServerMetadata: Sendable, Equatable {
    /// `issuer`: what `iss` in responses and ID tokens must equal, when known.
    public var issuer: String?
    /// `authorization_endpoint`
    public var authorizationEndpoint: URL
    /// `token_endpoint`
    public var tokenEndpoint: URL
    /// `revocation_endpoint` (RFC 7009)
    public var revocationEndpoint: URL?
    /// `device_authorization_endpoint` (RFC 8628)
    public var deviceAuthorizationEndpoint: URL?
    /// `userinfo_endpoint`
    public var userinfoEndpoint: URL?
    /// `jwks_uri`
    public var jwksURI: URL?
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3): a response without `iss` is then rejected.
    public var requiresIssuerParameter: Bool
    /// `pushed_authorization_request_endpoint` (RFC 9126 §5)
    public var pushedAuthorizationRequestEndpoint: URL?
    /// `require_pushed_authorization_requests` (RFC 9126 §5)
    public var requiresPushedAuthorizationRequests = false
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1); `nil` when not advertised.
    public var dpopSigningAlgorithms: [String]?
    /// `registration_endpoint` (RFC 8414 §2, RFC 7591 §3)
    public var registrationEndpoint: URL?
    /// `client_id_metadata_document_supported` (OAuth Client ID Metadata Document draft §4):
    /// a URL may be the client ID, the server fetching the client's metadata from it.
    public var acceptsClientIDMetadataDocuments = false

    public init(
        issuer: String?, authorizationEndpoint: URL, tokenEndpoint: URL, revocationEndpoint: URL? = nil,
        deviceAuthorizationEndpoint: URL? = nil, userinfoEndpoint: URL? = nil, jwksURI: URL? = nil,
        requiresIssuerParameter: Bool = false
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.jwksURI = jwksURI
        self.requiresIssuerParameter = requiresIssuerParameter
    }

    /// Where the discovery document of `provider` lives, or `nil` when the file lists every endpoint.
    public static func discoveryURL(for provider: OAuthProvider) -> URL? {
        guard let issuer = provider.issuer else { return nil }
        let endpoints = provider.endpoints
        let complete = endpoints.authorization != nil && endpoints.token != nil && (!provider.isOpenID || endpoints.jwks != nil)
        if complete { return nil }
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        if provider.isOpenID { return URL(string: trimmed + "/.well-known/openid-configuration") }
        // RFC 8414 §3.1 inserts the well-known segment before the issuer's path.
        guard var components = URLComponents(string: trimmed) else { return nil }
        components.path = "/.well-known/oauth-authorization-server" + components.path
        return components.url
    }

    /// Combines a discovery document (if one was read) with the file's explicit endpoints.
    public static func resolve(provider: OAuthProvider, document: DiscoveryDocument?) throws(DiscoveryError) -> ServerMetadata {
        if let document {
            guard document.issuer == provider.issuer else {
                throw .issuerMismatch(
                    provider: provider.name, configured: provider.issuer ?? "",
                    discovered: TerminalText.sanitized(document.issuer ?? "(none)", maxLength: 200))
            }
            if let methods = document.codeChallengeMethodsSupported, !methods.contains(PKCE.method) {
                throw .noPKCE(provider: provider.name)
            }
        }
        // The document speaks for the issuer: an issuer elsewhere may not point at this machine.
        let issuerURL = provider.issuer.flatMap(URL.init(string:))
        func endpoint(_ explicit: URL?, _ discovered: String?, _ field: String) throws(DiscoveryError) -> URL? {
            if let explicit { return explicit }
            guard let discovered else { return nil }
            switch issuerURL.map({ EndpointURL.validate(discovered, namedBy: $0) }) ?? EndpointURL.validate(discovered) {
            case .success(let url): return url
            case .failure(let problem): throw .badEndpoint(provider: provider.name, field: field, problem: problem.description)
            }
        }
        let endpoints = provider.endpoints
        guard let authorization = try endpoint(endpoints.authorization, document?.authorizationEndpoint, "authorization_endpoint") else {
            throw .missingEndpoint(provider: provider.name, field: "authorization_endpoint")
        }
        guard let token = try endpoint(endpoints.token, document?.tokenEndpoint, "token_endpoint") else {
            throw .missingEndpoint(provider: provider.name, field: "token_endpoint")
        }
        let jwks = try endpoint(endpoints.jwks, document?.jwksURI, "jwks_uri")
        if provider.isOpenID && jwks == nil { throw .missingEndpoint(provider: provider.name, field: "jwks_uri") }
        var metadata = ServerMetadata(
            issuer: provider.issuer,
            authorizationEndpoint: authorization,
            tokenEndpoint: token,
            revocationEndpoint: try endpoint(endpoints.revocation, document?.revocationEndpoint, "revocation_endpoint"),
            deviceAuthorizationEndpoint: try endpoint(
                endpoints.deviceAuthorization, document?.deviceAuthorizationEndpoint, "device_authorization_endpoint"),
            userinfoEndpoint: try endpoint(endpoints.userinfo, document?.userinfoEndpoint, "userinfo_endpoint"),
            jwksURI: jwks,
            requiresIssuerParameter: document?.authorizationResponseIssParameterSupported ?? false)
        metadata.pushedAuthorizationRequestEndpoint = try endpoint(
            nil, document?.pushedAuthorizationRequestEndpoint, "pushed_authorization_request_endpoint")
        metadata.requiresPushedAuthorizationRequests = document?.requirePushedAuthorizationRequests ?? false
        metadata.dpopSigningAlgorithms = document?.dpopSigningAlgValuesSupported
        metadata.registrationEndpoint = try endpoint(nil, document?.registrationEndpoint, "registration_endpoint")
        metadata.acceptsClientIDMetadataDocuments = document?.clientIDMetadataDocumentSupported ?? false
        return metadata
    }
}

/// The members of a discovery document Latchkey reads; everything else is ignored.
public struct DiscoveryDocument: Decodable, Sendable {
    public var issuer: String?
    public var authorizationEndpoint: String?
    public var tokenEndpoint: String?
    public var revocationEndpoint: String?
    public var deviceAuthorizationEndpoint: String?
    public var userinfoEndpoint: String?
    public var jwksURI: String?
    public var codeChallengeMethodsSupported: [String]?
    public var authorizationResponseIssParameterSupported: Bool?
    public var pushedAuthorizationRequestEndpoint: String?
    public var requirePushedAuthorizationRequests: Bool?
    public var dpopSigningAlgValuesSupported: [String]?
    public var registrationEndpoint: String?
    public var clientIDMetadataDocumentSupported: Bool?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case jwksURI = "jwks_uri"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
        case registrationEndpoint = "registration_endpoint"
        case clientIDMetadataDocumentSupported = "client_id_metadata_document_supported"
    }
}

/// Why a provider's server metadata could not be used.
public enum DiscoveryError: LatchkeyError, Equatable {
    case issuerMismatch(provider: String, configured: String, discovered: String)
    case noPKCE(provider: String)
    case missingEndpoint(provider: String, field: String)
    case badEndpoint(provider: String, field: String, problem: String)
    case unreadableDocument(provider: String, reason: String)

    public var category: FailureCategory { .rejected }

    public var description: String {
        switch self {
        case .issuerMismatch(let provider, let configured, let discovered):
            return
                "\(provider): the discovery document names issuer \(discovered), not the configured \(configured); check `issuer` in the provider file (they must match exactly, trailing slash included)"
        case .noPKCE(let provider):
            return "\(provider): the server does not list S256 in code_challenge_methods_supported; Latchkey signs in only with PKCE S256"
        case .missingEndpoint(let provider, let field):
            return "\(provider): no \(field) in discovery or in the provider file; set \(field) in the file"
        case .badEndpoint(let provider, let field, let problem):
            return "\(provider): discovery gave an unusable \(field): \(problem)"
        case .unreadableDocument(let provider, let reason):
            return "\(provider): the discovery document cannot be read: \(reason)"
        }
    }
}
