import LatchkeyEssentials
public import LatchkeyVault

/// Why an MCP server could not be added; nothing was written.
public enum MCPDiscoveryError: LatchkeyError, Equatable {
    case badURL(field: String? = nil, String)
    case noSignInAsked(status: Int)
    case badChallenge
    case noMetadata(tried: [String])
    case badMetadata(url: String)
    case otherResource(expected: String, named: String)
    case noAuthorizationServer
    case noServerMetadata(issuer: String, reasons: [String])
    case noRegistration(issuer: String)
    case badScope(String)
    /// `--client-metadata-url` is no URL a Client ID Metadata Document can live at.
    case badClientMetadataURL(String)
    /// `--client-metadata-url` was given, but the authorization server does not say it takes one.
    case noClientMetadataDocuments(issuer: String)
    /// The name is another provider's; refused before the server is asked anything.
    case nameTaken(name: String, file: String)

    public var category: FailureCategory {
        switch self {
        case .badURL(nil, _), .badClientMetadataURL: return .usage
        case .nameTaken: return .cannotCreate
        default: return .rejected
        }
    }

    public var description: String {
        switch self {
        case .badURL(nil, let problem):
            return "the MCP server's URL is unusable: \(problem)"
        case .badURL(let field?, let problem):
            return "the MCP server's metadata gave an unusable \(field): \(problem); nothing was written"
        case .noSignInAsked(let status):
            return
                "the MCP server answered a request without a token with HTTP \(status), not 401 with a Bearer challenge: it asks for no sign-in (or it is no MCP server); nothing was written"
        case .badChallenge:
            return
                "the MCP server's 401 has no WWW-Authenticate Bearer challenge that follows RFC 9110 §11.6.1 and RFC 6750 §3; nothing was written"
        case .noMetadata(let tried):
            return
                "no protected resource metadata (RFC 9728) at \(tried.map { TerminalText.sanitized($0, maxLength: 200) }.joined(separator: " or ")); nothing was written"
        case .badMetadata(let url):
            return
                "\(TerminalText.sanitized(url, maxLength: 200)) is not protected resource metadata (RFC 9728 §2: a JSON object with resource); nothing was written"
        case .otherResource(let expected, let named):
            return
                "the protected resource metadata is for \(named), not for \(expected): refusing it (RFC 9728 §3.3), since tokens for it would go to another server; nothing was written"
        case .noAuthorizationServer:
            return "the protected resource metadata names no authorization_servers; nothing was written"
        case .noServerMetadata(let issuer, let reasons):
            return
                "the authorization server \(TerminalText.sanitized(issuer, maxLength: 200)) has no RFC 8414 or OpenID discovery document (\(reasons.joined(separator: "; "))); nothing was written"
        case .nameTaken(let name, let file):
            return "a provider called \(name) exists already (\(file)) and is left as it is; choose another name with --name"
        case .badScope(let scope):
            return "the scope \"\(scope)\" is not an RFC 6749 §3.3 scope-token (visible ASCII, no quote or backslash); nothing was written"
        case .badClientMetadataURL(let problem):
            return "--client-metadata-url is unusable as a client ID: \(problem); nothing was written"
        case .noClientMetadataDocuments(let issuer):
            return
                "the authorization server \(TerminalText.sanitized(issuer, maxLength: 200)) does not take Client ID Metadata Documents (no client_id_metadata_document_supported: true in its metadata); leave out --client-metadata-url to register dynamically, or give --client-id; nothing was written"
        case .noRegistration(let issuer):
            return
                "the authorization server \(TerminalText.sanitized(issuer, maxLength: 200)) offers no dynamic client registration (no registration_endpoint); register a client there and give its ID with --client-id"
        }
    }
}
