public import LatchkeyVault

/// The newer OAuth pieces a provider file can ask for or turn off, each used where the server's
/// metadata advertises it unless the file says otherwise: pushed authorization requests
/// (RFC 9126). Kept apart from the rest of `OAuthClient` so the keys stay in
/// one block.
public struct ProtocolChoices: Sendable, Equatable {
    /// Follow discovery, or insist, or never.
    public enum Use: String, Sendable, CaseIterable {
        case auto, always, never
    }

    /// `par`
    public var pushedAuthorization: Use

    public init(pushedAuthorization: Use = .auto) {
        self.pushedAuthorization = pushedAuthorization
    }
}

extension ProtocolChoices {
    /// Whether an authorization request goes through the PAR endpoint: `always`, or `auto` when
    /// discovery lists one, and whenever the server requires it
    /// (`require_pushed_authorization_requests`, RFC 9126 §5).
    func pushesAuthorization(_ metadata: ServerMetadata, provider: String) throws(ProtocolChoiceError) -> Bool {
        switch pushedAuthorization {
        case .never:
            if metadata.requiresPushedAuthorizationRequests { throw .pushedAuthorizationRequired(provider: provider) }
            return false
        case .always:
            guard metadata.pushedAuthorizationRequestEndpoint != nil else {
                throw .missingEndpoint(provider: provider, field: "pushed_authorization_request_endpoint", key: "par")
            }
            return true
        case .auto:
            return metadata.pushedAuthorizationRequestEndpoint != nil
        }
    }
}

/// A provider file's choice the server cannot honour.
public enum ProtocolChoiceError: LatchkeyError, Equatable {
    case pushedAuthorizationRequired(provider: String)
    case missingEndpoint(provider: String, field: String, key: String)

    public var category: FailureCategory { .configuration }

    public var description: String {
        switch self {
        case .pushedAuthorizationRequired(let provider):
            return
                "\(provider): the server requires pushed authorization requests (require_pushed_authorization_requests), but the provider file says par = \"never\"; remove the line"
        case .missingEndpoint(let provider, let field, let key):
            return
                "\(provider): the server advertises no \(field), which \(key) in the provider file needs; check the issuer, or remove \(key)"
        }
    }
}
