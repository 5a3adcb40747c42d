import Foundation

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
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
                throw TokenEndpointError.malformed(endpoint: endpoint, reason: "the body is not a JSON object (HTTP \(response.status))")
            }
            object = parsed
        } catch let error as TokenEndpointError {
            throw error
        } catch {
            throw .malformed(endpoint: endpoint, reason: "the body is not JSON (HTTP \(response.status))")
        }
        if let error = OAuthErrorResponse(json: object) { throw .oauth(endpoint: endpoint, error) }
        guard response.status == 200 else {
            throw .malformed(endpoint: endpoint, reason: "HTTP \(response.status) without an OAuth error")
        }
        guard let accessToken = object["access_token"] as? String, !accessToken.isEmpty else {
            throw .malformed(endpoint: endpoint, reason: "access_token is missing or not a string")
        }
        guard let tokenType = object["token_type"] as? String, !tokenType.isEmpty else {
            throw .malformed(endpoint: endpoint, reason: "token_type is missing or not a string")
        }
        var expiresIn: Int?
        switch object["expires_in"] {
        case nil, is NSNull: expiresIn = nil
        // Some providers send the number as a string; accept it only when it is plainly one.
        case let text as String where Int(text).map({ $0 >= 0 }) == true: expiresIn = Int(text)
        case let value:
            guard let seconds = JSONScalar.integer(value), seconds >= 0, seconds < 1_000_000_000 else {
                throw .malformed(endpoint: endpoint, reason: "expires_in is not a non-negative number")
            }
            expiresIn = seconds
        }
        func optionalString(_ key: String) throws(TokenEndpointError) -> String? {
            switch object[key] {
            case nil, is NSNull: return nil
            case let text as String: return text.isEmpty ? nil : text
            default: throw .malformed(endpoint: endpoint, reason: "\(key) is not a string")
            }
        }
        return TokenResponse(
            accessToken: Secret(accessToken), tokenType: tokenType, expiresIn: expiresIn,
            refreshToken: try optionalString("refresh_token").map(Secret.init), scope: try optionalString("scope"),
            idToken: try optionalString("id_token").map(Secret.init))
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

    public var description: String {
        switch self {
        case .oauth(let endpoint, let error): return "the \(endpoint) answered with an error: \(error)"
        case .malformed(let endpoint, let reason): return "the \(endpoint)'s response was rejected: \(reason)"
        }
    }
}
