public import Foundation
import LatchkeyEssentials
public import LatchkeyVault

/// The newer OAuth pieces a provider file can ask for or turn off, each used where the server's
/// metadata advertises it unless the file says otherwise: pushed authorization requests
/// (RFC 9126), DPoP (RFC 9449) and resource indicators (RFC 8707). Kept apart from the rest of `OAuthClient` so the keys stay in
/// one block.
public struct ProtocolChoices: Sendable, Equatable {
    /// `par` and `dpop`: follow discovery, or insist, or never.
    public enum Use: String, Sendable, CaseIterable {
        case auto, always, never
    }

    /// `par`
    public var pushedAuthorization: Use
    /// `dpop`
    public var proofOfPossession: Use
    /// `resources`: asked for at every sign-in, because some servers (glewlwyd) let a refresh
    /// name only a resource the sign-in named (`latchkey token --resource`).
    public var resources: [String] = []
    /// `git_resource`: the resource `git-credential` narrows git's token to (RFC 8707), through
    /// the same refresh grant as `latchkey token --resource`.
    public var gitResource: String?
    /// `mcp_url`: the MCP server this provider signs in for (`latchkey mcp add`), one of
    /// `resources` so that its tokens are bound to it (RFC 8707, the MCP authorization spec).
    public var mcpURL: URL?
    /// `grant`: sign in as a person through the browser, or as the client itself.
    public var grant: Grant = .authorizationCode
    /// `client_secret_file`: where the client secret of `grant = "client_credentials"` is.
    public var clientSecretFile: String?
    /// `private_key_file`: the PEM key that signs `private_key_jwt` assertions (RFC 7523) instead
    /// of a client secret; `private_key_id` is its `kid`, for a server holding several keys.
    public var privateKeyFile: String?
    public var privateKeyID: String?
    /// `registration`: the file's `client_id`, or a client Latchkey registers for itself at the
    /// first sign-in (RFC 7591) and keeps in the vault.
    public var registration: Registration = .preRegistered

    public enum Registration: String, Sendable, CaseIterable {
        /// The client ID written in the file, registered by a person.
        case preRegistered = "static"
        /// Registered by Latchkey at the server's `registration_endpoint`.
        case dynamic
    }

    public enum Grant: String, Sendable, CaseIterable {
        case authorizationCode = "authorization_code"
        case clientCredentials = "client_credentials"
    }

    public init(pushedAuthorization: Use = .auto, proofOfPossession: Use = .auto) {
        self.pushedAuthorization = pushedAuthorization
        self.proofOfPossession = proofOfPossession
    }
}

extension ProtocolChoices {
}

/// A resource indicator (RFC 8707 §2): an absolute URI without a fragment, of at most
/// `maximumLength` bytes. The one check for every door a resource comes in by: `token`, `exec`
/// and `proof --resource`, `git-credential --resource`, `login --resource`, the provider file's
/// `resources` and `git_resource`, and the agent's requests, local and forwarded.
public enum ResourceIndicator {
    /// 2 KiB: a URL of an API is rarely a tenth of it, and each one asked for is kept in the vault
    /// with its token (`NarrowedToken.keptPerAccount` of them per account), so it is what bounds
    /// what a client, a forwarded host included, can make the vault keep.
    public static let maximumLength = 2048

    /// Why `text` cannot be a `resource` value, or `nil` when it can.
    public static func problem(_ text: String) -> String? {
        guard text.utf8.count <= maximumLength else {
            return "a resource of \(text.utf8.count) bytes is longer than the \(maximumLength) a resource indicator may have"
        }
        guard let url = URL(string: text), url.scheme != nil, !text.contains(" ") else {
            return
                "\"\(TerminalText.sanitized(text, maxLength: 80))\" is not an absolute URI (RFC 8707 §2), such as https://api.example.com/"
        }
        guard url.fragment == nil && !text.contains("#") else {
            return "\"\(TerminalText.sanitized(text, maxLength: 80))\" must not contain a #fragment (RFC 8707 §2)"
        }
        return nil
    }
}

/// A provider file's choice the server cannot honour.
public enum ProtocolChoiceError: LatchkeyError, Equatable {
    case pushedAuthorizationRequired(provider: String)
    case missingEndpoint(provider: String, field: String, key: String)
    case noES256(provider: String)

    public var category: FailureCategory { .configuration }

    public var description: String {
        switch self {
        case .pushedAuthorizationRequired(let provider):
            return
                "\(provider): the server requires pushed authorization requests (require_pushed_authorization_requests), but the provider file says par = \"never\"; remove the line"
        case .missingEndpoint(let provider, let field, let key):
            return
                "\(provider): the server advertises no \(field), which \(key) in the provider file needs; check the issuer, or remove \(key)"
        case .noES256(let provider):
            return
                "\(provider): dpop = \"always\", but the server's dpop_signing_alg_values_supported does not list ES256, the only algorithm Latchkey signs proofs with"
        }
    }
}
