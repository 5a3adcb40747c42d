public import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// The `apiVersion`s of the client-go credential plugin exchange Latchkey speaks
/// (docs/kubernetes-and-registries.md, "kubectl"): the answer carries the version kubectl asked
/// in, since client-go refuses an answer in any other.
public enum ExecCredentialAPIVersion: String, Sendable, CaseIterable {
    /// Kubernetes 1.22 and later.
    case v1 = "client.authentication.k8s.io/v1"
    /// Kubernetes 1.11 and later (the only one Debian 12's kubectl 1.20 knows).
    case v1beta1 = "client.authentication.k8s.io/v1beta1"
}

/// What kubectl tells its credential plugin in `KUBERNETES_EXEC_INFO`: an `ExecCredential`
/// object with no `status`.
///
/// Only the members Latchkey acts on are kept; `spec.cluster` (sent with
/// `provideClusterInfo: true`) and members a later Kubernetes adds are ignored, as client-go's
/// own decoding ignores members it does not know.
public struct ExecCredentialRequest: Sendable, Equatable {
    /// `apiVersion`: the version the answer must carry.
    public var apiVersion: ExecCredentialAPIVersion
    /// `spec.interactive`: whether stdin is the person's terminal, so a sign-in may prompt; absent
    /// means not interactive.
    public var interactive: Bool

    /// The environment variable client-go sets for every plugin run.
    public static let environmentVariable = "KUBERNETES_EXEC_INFO"

    public init(apiVersion: ExecCredentialAPIVersion, interactive: Bool) {
        self.apiVersion = apiVersion
        self.interactive = interactive
    }

    /// Reads `KUBERNETES_EXEC_INFO`'s value; `nil` (the variable is not set) is an error too: the
    /// answer's version cannot be guessed, and a plugin run by hand should say what runs it.
    public init(parsing text: String?) throws(ExecCredentialError) {
        guard let text else { throw .notSet }
        let object: [String: JSONValue]
        do {
            object = try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
        } catch {
            throw .notJSON
        }
        guard case .string(let kind)? = object["kind"], kind == "ExecCredential" else {
            throw .notAnExecCredential
        }
        guard case .string(let version)? = object["apiVersion"] else { throw .noAPIVersion }
        guard let apiVersion = ExecCredentialAPIVersion(rawValue: version) else { throw .unknownAPIVersion(version) }
        var interactive = false
        switch object["spec"] {
        case nil, .null?: break
        case .object(let spec)?:
            switch spec["interactive"] {
            case nil, .null?: break
            case .bool(let value)?: interactive = value
            default: throw .badMember("spec.interactive", expected: "true or false")
            }
        default: throw .badMember("spec", expected: "an object")
        }
        self.init(apiVersion: apiVersion, interactive: interactive)
    }
}

/// The plugin's answer on stdout: `{"apiVersion", "kind": "ExecCredential", "status": {"token",
/// "expirationTimestamp"}}`, as the Kubernetes documentation's example answer is written.
///
/// Encoded only through a JSON encoder (`Output.json`), the one way the token is written out.
public struct ExecCredential: Sendable, Encodable {
    public var apiVersion: ExecCredentialAPIVersion
    /// `status.token`: the bearer token client-go sends to the API server.
    public var token: Secret
    /// `status.expirationTimestamp`: client-go keeps the credential until this instant and runs
    /// the plugin again after it; `nil` (the provider gave no lifetime) leaves it out, and then
    /// client-go asks again only after the API server answers 401.
    public var expiresAt: Date?

    public init(apiVersion: ExecCredentialAPIVersion, token: Secret, expiresAt: Date?) {
        self.apiVersion = apiVersion
        self.token = token
        self.expiresAt = expiresAt
    }

    /// RFC 3339 in UTC, whole seconds rounded down: never later than the token's own expiry,
    /// or kubectl would send a token the server already refuses.
    public var expirationTimestamp: String? {
        guard let expiresAt else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: expiresAt.timeIntervalSince1970.rounded(.down)))
    }

    private enum CodingKeys: String, CodingKey {
        case apiVersion, kind, status
    }

    private enum StatusKeys: String, CodingKey {
        case token, expirationTimestamp
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(apiVersion.rawValue, forKey: .apiVersion)
        try container.encode("ExecCredential", forKey: .kind)
        var status = container.nestedContainer(keyedBy: StatusKeys.self, forKey: .status)
        try status.encode(token, forKey: .token)
        try status.encodeIfPresent(expirationTimestamp, forKey: .expirationTimestamp)
    }
}

/// A `KUBERNETES_EXEC_INFO` Latchkey cannot answer; kubectl shows the line to the person.
public enum ExecCredentialError: LatchkeyError, Equatable {
    case notSet
    case notJSON
    case notAnExecCredential
    case noAPIVersion
    case unknownAPIVersion(String)
    case badMember(String, expected: String)

    public var category: FailureCategory { .usage }

    public var description: String {
        let known = ExecCredentialAPIVersion.allCases.map(\.rawValue).joined(separator: " or ")
        switch self {
        case .notSet:
            return "KUBERNETES_EXEC_INFO is not set: kubectl-credential is run by kubectl, from a kubeconfig user's exec "
                + "(see `latchkey kubeconfig`)"
        case .notJSON:
            return "KUBERNETES_EXEC_INFO is not JSON: it must be the ExecCredential object kubectl sets"
        case .notAnExecCredential:
            return "KUBERNETES_EXEC_INFO is not an ExecCredential (its kind must be \"ExecCredential\")"
        case .noAPIVersion:
            return "KUBERNETES_EXEC_INFO has no apiVersion; Latchkey answers \(known)"
        case .unknownAPIVersion(let version):
            return "KUBERNETES_EXEC_INFO asks for apiVersion \"\(TerminalText.sanitized(version, maxLength: 80))\"; "
                + "Latchkey answers \(known): set one of them as the exec apiVersion in the kubeconfig"
        case .badMember(let member, let expected):
            return "KUBERNETES_EXEC_INFO's \(member) must be \(expected)"
        }
    }
}
