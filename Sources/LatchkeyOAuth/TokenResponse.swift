import Foundation
public import LatchkeySupport
public import LatchkeyVault

/// A successful token response (RFC 6749 §5.1), from the authorization-code, refresh or device grant.
public struct TokenResponse: Sendable {
    /// `access_token`
    public var accessToken: Secret
    /// `token_type`, usually `Bearer`.
    public var tokenType: String
    /// `expires_in`, seconds.
    public var expiresIn: Int?
    /// `refresh_token`: when present on a refresh, it replaces the old one (rotation).
    public var refreshToken: Secret?
    /// `scope`, when the server granted other scopes than requested.
    public var scope: String?
    /// `id_token` (OIDC Core §3.1.3.3).
    public var idToken: Secret?

    /// Reads a token endpoint answer: §5.1 on 200, §5.2 otherwise, and an `error` member even on 200
    /// (GitHub answers errors with 200).
    public static func parse(_ response: HTTPResponse, endpoint: String) throws(TokenEndpointError) -> TokenResponse {
        let decoded = Result { try JSONDecoder().decode(Wire.self, from: Data(response.body)) }
        if case .failure(let error) = decoded, Wire.member(error) == nil {
            let what = Wire.isNotAnObject(error) ? "not a JSON object" : "not JSON"
            throw .malformed(endpoint: endpoint, reason: "the body is \(what) (HTTP \(response.status))")
        }
        if let error = OAuthErrorResponse(body: response.body) { throw .oauth(endpoint: endpoint, error) }
        guard response.status == 200 else {
            throw .malformed(endpoint: endpoint, reason: "HTTP \(response.status) without an OAuth error")
        }
        let wire: Wire
        switch decoded {
        case .success(let value): wire = value
        case .failure(let error): throw .malformed(endpoint: endpoint, reason: Wire.reason(member: Wire.member(error) ?? ""))
        }
        guard let accessToken = wire.accessToken, !accessToken.isEmpty else {
            throw .malformed(endpoint: endpoint, reason: Wire.reason(member: Wire.CodingKeys.accessToken.rawValue))
        }
        guard let tokenType = wire.tokenType, !tokenType.isEmpty else {
            throw .malformed(endpoint: endpoint, reason: Wire.reason(member: Wire.CodingKeys.tokenType.rawValue))
        }
        func nonEmpty(_ text: String?) -> String? { text?.isEmpty == false ? text : nil }
        // Tokens go to stdout, into headers and into the kernel keyring: only visible ASCII.
        for (member, value) in [("access_token", accessToken), ("refresh_token", wire.refreshToken), ("id_token", wire.idToken)] {
            if let problem = TokenText.problem(value, member: member) { throw .malformed(endpoint: endpoint, reason: problem) }
        }
        return TokenResponse(
            accessToken: Secret(accessToken), tokenType: tokenType, expiresIn: wire.expiresIn?.seconds,
            refreshToken: nonEmpty(wire.refreshToken).map(Secret.init), scope: nonEmpty(wire.scope),
            idToken: nonEmpty(wire.idToken).map(Secret.init))
    }
}

extension TokenResponse {
    /// The §5.1 members as they arrive; `parse` validates them. Every member is optional here
    /// (`null` counts as absent) so that a missing one gets its own message.
    struct Wire: Decodable {
        /// `access_token`
        var accessToken: String?
        /// `token_type`
        var tokenType: String?
        /// `expires_in`
        var expiresIn: WireLifetime?
        /// `refresh_token`
        var refreshToken: String?
        /// `scope`
        var scope: String?
        /// `id_token` (OIDC Core §3.1.3.3)
        var idToken: String?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresIn = "expires_in"
            case refreshToken = "refresh_token"
            case scope
            case idToken = "id_token"
        }

        /// The member a decoding error is about; `nil` when the body as a whole was unreadable.
        static func member(_ error: any Error) -> String? {
            let context: DecodingError.Context
            switch error as? DecodingError {
            case .typeMismatch(_, let found), .valueNotFound(_, let found), .dataCorrupted(let found): context = found
            case .keyNotFound(_, let found): context = found
            default: return nil
            }
            return context.codingPath.first?.stringValue
        }

        /// Whether the body was JSON, but not an object (`[1,2]`, `"text"`).
        static func isNotAnObject(_ error: any Error) -> Bool {
            if case .typeMismatch = error as? DecodingError { return true }
            return false
        }

        /// Why `member` was refused.
        static func reason(member: String) -> String {
            switch CodingKeys(rawValue: member) {
            case .accessToken, .tokenType: return "\(member) is missing or not a string"
            case .expiresIn: return "expires_in is not a non-negative number"
            default: return "\(member) is not a string"
            }
        }
    }
}

/// What went wrong at the token endpoint (or the device or revocation endpoint).
public enum TokenEndpointError: LatchkeyError, Equatable {
    case oauth(endpoint: String, OAuthErrorResponse)
    case malformed(endpoint: String, reason: String)

    public var category: FailureCategory {
        switch self {
        case .oauth(_, let error) where error.error == "invalid_grant": return .notFound
        default: return .rejected
        }
    }

    /// `invalid_grant` on a refresh: the refresh token is dead and the account must sign in again.
    public var isInvalidGrant: Bool {
        if case .oauth(_, let error) = self { return error.error == "invalid_grant" }
        return false
    }

    /// `invalid_target` (RFC 8707 §2): the server will not give a token for the resource asked.
    public var isInvalidTarget: Bool {
        if case .oauth(_, let error) = self { return error.error == "invalid_target" }
        return false
    }

    public var description: String {
        switch self {
        case .oauth(let endpoint, let error): return "the \(endpoint) answered with an error: \(error)"
        case .malformed(let endpoint, let reason): return "the \(endpoint)'s response was rejected: \(reason)"
        }
    }
}
