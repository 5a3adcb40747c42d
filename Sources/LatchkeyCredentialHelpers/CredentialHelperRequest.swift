import Foundation
import LatchkeyEssentials
public import LatchkeyProviders
public import LatchkeyVault

/// One run of a Docker credential helper (docs/kubernetes-and-registries.md, "Container
/// registries"): the client runs `docker-credential-NAME ACTION` and writes the request on stdin.
public enum CredentialHelperRequest: Sendable, Equatable {
    /// `get`: stdin is a server URL, with or without a trailing newline.
    case get(RegistryServerURL)
    /// `list`: no input.
    case list
    /// `store`: stdin is `{"ServerURL", "Username", "Secret"}` (after `docker login`).
    case store(RegistryServerURL)
    /// `erase`: stdin is a server URL (after `docker logout`).
    case erase(RegistryServerURL)

    /// The actions of the protocol.
    public static let actions = ["get", "list", "store", "erase"]

    /// The most a request may hold: a server URL or a `store` object is far below it.
    public static let inputLimit = 64 * 1024

    /// Reads `input` for `action`.
    public init(action: String, input: [UInt8]) throws(CredentialHelperError) {
        guard input.count <= Self.inputLimit else { throw .tooLarge }
        switch action {
        case "get": self = .get(try RegistryServerURL(parsing: Self.text(input)))
        case "erase": self = .erase(try RegistryServerURL(parsing: Self.text(input)))
        case "list": self = .list
        case "store":
            // Only the server is read: the password `docker login` passes is never kept, not even
            // decoded.
            struct Stored: Decodable {
                var serverURL: String
                enum CodingKeys: String, CodingKey { case serverURL = "ServerURL" }
            }
            let stored: Stored
            do {
                stored = try JSONDecoder().decode(Stored.self, from: Data(input))
            } catch {
                throw .storeNotJSON
            }
            self = .store(try RegistryServerURL(parsing: stored.serverURL))
        default: throw .unknownAction(action)
        }
    }

    private static func text(_ input: [UInt8]) throws(CredentialHelperError) -> String {
        guard let text = String(validating: input, as: UTF8.self) else { throw .notUTF8 }
        return text
    }
}

/// A server URL as clients name registries: `registry.example.com`, `host:5000`,
/// `https://index.docker.io/v1/`. The host is what `registry_hosts` entries are matched with.
public struct RegistryServerURL: Sendable, Equatable {
    /// As the client sent it (less surrounding white space): `get` answers with it.
    public var text: String
    /// `host[:port]`, read as `git_hosts` entries are (`GitHost`).
    public var host: GitHost
    /// `http` or `https` when the URL had a scheme.
    public var scheme: String?

    public init(parsing raw: String) throws(CredentialHelperError) {
        text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        var rest = Substring(text)
        if let schemeEnd = rest.range(of: "://") {
            let scheme = rest[..<schemeEnd.lowerBound].lowercased()
            guard scheme == "https" || scheme == "http" else { throw .notAServerURL(text) }
            self.scheme = scheme
            rest = rest[schemeEnd.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        switch GitHost.parse(String(rest)) {
        case .success(let host): self.host = host
        case .failure: throw .notAServerURL(text)
        }
    }

    /// Whether a token may go to this server: not over plain http, unless to a loopback host.
    public var allowsToken: Bool { scheme != "http" || host.isLoopback }
}

/// A request a credential client never sends; the line goes on stdout, where clients look for it.
public enum CredentialHelperError: LatchkeyError, Equatable {
    case unknownAction(String)
    case tooLarge
    case notUTF8
    case notAServerURL(String)
    case storeNotJSON

    public var category: FailureCategory { .usage }

    public var description: String {
        switch self {
        case .unknownAction(let action):
            return "unknown credential helper action \"\(TerminalText.sanitized(action, maxLength: 40))\"; "
                + "docker-credential-latchkey answers \(CredentialHelperRequest.actions.joined(separator: ", "))"
        case .tooLarge:
            return "the credential helper request is larger than \(CredentialHelperRequest.inputLimit / 1024) KiB"
        case .notUTF8:
            return "the credential helper request is not UTF-8 text"
        case .notAServerURL(let text):
            return "\"\(TerminalText.sanitized(text, maxLength: 100))\" is not a registry server URL "
                + "such as registry.example.com, registry.example.com:5000 or https://registry.example.com/v2/"
        case .storeNotJSON:
            return "store expects a JSON object with ServerURL, Username and Secret on stdin"
        }
    }
}
