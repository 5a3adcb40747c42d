import Foundation
import LatchkeyEssentials
import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault
import LoopbackHTTP

/// The request that reached the redirect URI: what the loopback listener saw, or what was pasted.
public struct RedirectRequest: Sendable {
    /// The HTTP request-target: the raw path and query, exactly as received.
    public var target: String
    /// The `Host` header (loopback) or the pasted URL's authority.
    public var host: String?

    public init(target: String, host: String?) {
        self.target = target
        self.host = host
    }

    /// A URL pasted from the browser's address bar, split like a request that reached the listener.
    public init(pastedURL: String) throws(AuthorizationResponseError) {
        let trimmed = pastedURL.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: trimmed), components.scheme?.lowercased() == "http",
            let host = components.percentEncodedHost
        else { throw .unreadablePastedURL }
        let authority = components.port.map { "\(host):\($0)" } ?? host
        var target = components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        self.init(target: target, host: authority)
    }
}

/// A validated authorization code (RFC 6749 §4.1.2), ready to be exchanged once.
public struct AuthorizationCode: Sendable {
    public let value: Secret
}

extension PendingAuthorization {
    /// Checks an authorization response against everything this request is bound to.
    ///
    /// The order matters: the path and host say whether the response is even addressed to this
    /// provider, `state` whether it answers this request, `iss` whether it comes from this issuer
    /// (RFC 9207), and only then is an `error` believed or a `code` accepted.
    public func validate(_ request: RedirectRequest) throws(AuthorizationResponseError) -> AuthorizationCode {
        guard let redirect = URLComponents(string: redirectURI), let port = redirect.port else {
            throw .unreadablePastedURL
        }
        let targetParts = request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(targetParts[0])
        guard path == provider.redirectPath else {
            throw .wrongRedirectPath(
                received: TerminalText.sanitized(path, maxLength: 200), expected: provider.redirectPath, provider: provider.name)
        }
        guard LoopbackHTTPRequest.namesLoopback(host: request.host, port: port) else {
            throw .wrongHost(
                received: TerminalText.sanitized(request.host ?? "(none)", maxLength: 200),
                expected: "\(provider.loopbackHost.rawValue):\(port)")
        }
        let query = targetParts.count > 1 ? targetParts[1] : ""
        guard let pairs = FormEncoding.decode(query) else { throw .malformed("the query string is not valid percent-encoding") }
        var parameters: [String: String] = [:]
        for (name, value) in pairs {
            guard parameters[name] == nil else {
                throw .malformed("parameter \"\(TerminalText.sanitized(name, maxLength: 40))\" appears more than once (RFC 6749 §3.1)")
            }
            parameters[name] = value
        }

        guard let receivedState = parameters["state"] else { throw .missingState }
        guard state.constantTimeEquals(receivedState) else { throw .stateMismatch }

        if let issuer = parameters["iss"] {
            guard let expected = metadata.issuer, issuer == expected else {
                throw .issuerMismatch(
                    received: TerminalText.sanitized(issuer, maxLength: 200), expected: metadata.issuer ?? "(none configured)")
            }
        } else if metadata.requiresIssuerParameter {
            throw .missingIssuer
        }

        if let error = parameters["error"] {
            throw .authorizationServer(
                OAuthErrorResponse(error: error, errorDescription: parameters["error_description"], errorURI: parameters["error_uri"]))
        }
        guard let code = parameters["code"], !code.isEmpty else { throw .missingCode }
        return AuthorizationCode(value: Secret(code))
    }
}

/// Why an authorization response was rejected; each one aborts the sign-in with nothing stored.
public enum AuthorizationResponseError: LatchkeyError, Equatable {
    case wrongRedirectPath(received: String, expected: String, provider: String)
    case wrongHost(received: String, expected: String)
    case malformed(String)
    case missingState
    case stateMismatch
    case issuerMismatch(received: String, expected: String)
    case missingIssuer
    case missingCode
    case unreadablePastedURL
    case authorizationServer(OAuthErrorResponse)

    public var category: FailureCategory { .rejected }

    public var description: String {
        switch self {
        case .wrongRedirectPath(let received, let expected, let provider):
            return
                "a response arrived at \(received), not at \(provider)'s redirect path \(expected); it may have been meant for another provider (mix-up attack), so the sign-in was aborted"
        case .wrongHost(let received, let expected):
            return "the response was addressed to \(received), not to this sign-in's redirect address \(expected); aborted"
        case .malformed(let reason):
            return "the authorization response is malformed: \(reason)"
        case .missingState:
            return "the authorization response has no state parameter, so it cannot be tied to this sign-in; aborted"
        case .stateMismatch:
            return "the authorization response's state does not match this sign-in (a stale, replayed or forged response); aborted"
        case .issuerMismatch(let received, let expected):
            return "the authorization response came from issuer \(received), not \(expected) (RFC 9207 mix-up defence); aborted"
        case .missingIssuer:
            return "the provider promises an iss parameter on authorization responses (RFC 9207) but this response has none; aborted"
        case .missingCode:
            return "the authorization response carries neither a code nor an error"
        case .unreadablePastedURL:
            return "that is not the redirect URL: paste the whole http://127.0.0.1:PORT/... address from the browser's address bar"
        case .authorizationServer(let error):
            return "the provider refused the sign-in: \(error)"
        }
    }
}
