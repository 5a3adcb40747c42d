import Foundation
import LatchkeyEssentials
import LatchkeySupport
import LatchkeyVault

/// Who signed in at a plain OAuth 2.0 server that names no account: no ID token and no
/// `userinfo_endpoint` (an MCP server's authorization server, RFC 8414 only). The account still
/// needs an identity that is the same at every sign-in, so that signing in again finds it.
///
/// When the access token is a JWT that this issuer says it issued (`iss`) and that has a `sub`,
/// that `sub` names the account. The token is not verified: it came straight from the token
/// endpoint over the connection Latchkey opened, and it only names the account; it grants
/// nothing Latchkey relies on. Anything else (an opaque token, another issuer's JWT, a `sub`
/// no account could be named by) gives the one account of this provider, `unnamed`.
package enum AccessTokenIdentity {
    /// The subject of the one account at a server that names none; also how it is selected
    /// (`NAME:unnamed`). A fixed word, not a display name: a display name goes out as
    /// `login_hint` when signing in again.
    static let unnamedSubject = "unnamed"
    /// Longer access tokens are not decoded: a JWT naming an account is far shorter, and a
    /// hostile server's token should not cost more than a length check.
    static let longestDecodedToken = 16_384
    /// A `sub` longer than this, or with a control character, names no account (RFC 7519 §4.1.2
    /// sets no limit; OIDC Core §2 sets 255 ASCII characters for its `sub`).
    static let longestSubject = 255

    static func identity(of accessToken: Secret, issuer: String) -> OAuthEngine.Identity {
        let unnamed = OAuthEngine.Identity(issuer: issuer, subject: unnamedSubject, displayName: nil)
        let token = accessToken.exposedValue
        guard token.utf8.count <= longestDecodedToken else { return unnamed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = try? JSONDecoder().decode(IDTokenVerifier.Payload.self, from: payload),
            claims.issuer == issuer, let subject = claims.subject, !subject.isEmpty, subject.count <= longestSubject,
            !subject.unicodeScalars.contains(where: TerminalText.isControl)
        else { return unnamed }
        return OAuthEngine.Identity(issuer: issuer, subject: subject, displayName: nil)
    }
}
