package import LatchkeyProviders

/// The provider file's protocol choices against what the server's metadata offers.
extension ProtocolChoices {
    /// Whether an authorization request goes through the PAR endpoint: `always`, or `auto` when
    /// discovery lists one, and whenever the server requires it
    /// (`require_pushed_authorization_requests`, RFC 9126 §5).
    package func pushesAuthorization(_ metadata: ServerMetadata, provider: String) throws(ProtocolChoiceError) -> Bool {
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

    /// Whether a sign-in binds its tokens to a new DPoP key: `always`, or `auto` when discovery
    /// lists ES256 in `dpop_signing_alg_values_supported` (RFC 9449 §5.1). `always` at a server
    /// that lists algorithms without ES256 is refused: its proofs would all fail.
    package func bindsTokens(_ metadata: ServerMetadata, provider: String) throws(ProtocolChoiceError) -> Bool {
        let offersES256 = metadata.dpopSigningAlgorithms?.contains(DPoPKey.algorithm)
        switch proofOfPossession {
        case .never: return false
        case .always:
            if offersES256 == false { throw .noES256(provider: provider) }
            return true
        case .auto: return offersES256 == true
        }
    }
}
