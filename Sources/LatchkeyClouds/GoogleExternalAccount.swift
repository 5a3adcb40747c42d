import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyOAuth
import LatchkeySupport
public import LatchkeyVault

/// Google's executable-sourced `external_account` credentials (workload and workforce identity
/// federation, AIP-4117): the configuration `gcp-config` writes for `gcloud` and the client
/// libraries, and the answer `gcp-credential` gives them when they run it.
public enum GoogleExternalAccount {
    /// The one subject token Latchkey gives: the account's OpenID Connect ID token.
    public static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    /// Google's Security Token Service, where the libraries exchange the ID token.
    public static let defaultTokenURL = "https://sts.googleapis.com/v1/token"
    /// How long the libraries wait for `gcp-credential` (Google allows 5 to 120 seconds): a
    /// refresh at a slow provider fits, a sign-in does not, as the libraries run it unattended.
    static let timeoutMillis = 30_000

    /// The credential configuration (`GOOGLE_APPLICATION_CREDENTIALS`, `gcloud auth login
    /// --cred-file`) whose executable source is `command`, as Google's libraries split it.
    public static func configuration(
        audience: String, command: [String], tokenURL: String?, impersonationURL: String?
    ) throws(GoogleCredentialError) -> String {
        if let problem = audienceProblem(audience) { throw .invalidAudience(audience, problem: problem) }
        // Go's and Java's libraries split the command at spaces; Python's as a shell would.
        if let word = command.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) || $0.contains(where: \.isNewline) }) {
            throw .unsplittableCommand(word)
        }
        let configuration = Configuration(
            audience: audience, tokenURL: try checkedURL(tokenURL ?? defaultTokenURL, option: "--token-url").absoluteString,
            impersonationURL: try impersonationURL.map { url throws(GoogleCredentialError) in
                try checkedURL(url, option: "--service-account-impersonation-url").absoluteString
            },
            source: .init(executable: .init(command: command.joined(separator: " "), timeoutMillis: timeoutMillis)))
        // Encoding plain strings and numbers cannot fail.
        return try! ReportJSON.text(of: configuration)
    }

    /// Creates `file` with `text`: owner-only, never replacing a file or following a link there.
    public static func create(_ file: String, text: String) throws(GoogleCredentialError) {
        do {
            try ExclusiveFile.create(file, text: text)
        } catch {
            switch error {
            case .exists: throw .exists(file: file)
            case .cannotWrite(let reason): throw .cannotWrite(file: file, reason: reason)
            }
        }
    }

    /// Replaces the libraries' output file (`GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE`) with
    /// `response`, owner-only: it holds the ID token until it expires.
    public static func writeOutputFile(_ file: String, _ response: GoogleExecutableResponse) throws(GoogleCredentialError) {
        do {
            try AtomicFile.replace(file, with: Array(try ReportJSON.text(of: response).utf8))
        } catch {
            throw .cannotWrite(file: file, reason: (error as? any LatchkeyError)?.description ?? String(describing: error))
        }
    }

    /// Why `audience` is not the full resource name of a workload or workforce identity pool
    /// provider, or nil when it is one.
    static func audienceProblem(_ audience: String) -> String? {
        let name = "[a-z0-9-]{1,63}"
        let workload = "//iam\\.googleapis\\.com/projects/[0-9]{1,20}/locations/global/workloadIdentityPools/\(name)/providers/\(name)"
        let workforce = "//iam\\.googleapis\\.com/locations/global/workforcePools/\(name)/providers/\(name)"
        guard let pattern = try? Regex("\(workload)|\(workforce)"), (try? pattern.wholeMatch(in: audience)) != nil else {
            return
                "is not a pool provider's name: //iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER (or locations/global/workforcePools/POOL/providers/PROVIDER)"
        }
        return nil
    }

    private static func checkedURL(_ raw: String, option: String) throws(GoogleCredentialError) -> URL {
        switch EndpointURL.validate(raw) {
        case .success(let url): return url
        case .failure(let problem): throw .invalidURL(raw, option: option, problem: problem.description)
        }
    }

    struct Configuration: Encodable {
        let type = "external_account"
        var audience: String
        let subjectTokenType = GoogleExternalAccount.idTokenType
        var tokenURL: String
        var impersonationURL: String?
        var source: Source

        struct Source: Encodable {
            var executable: Executable
        }

        struct Executable: Encodable {
            var command: String
            var timeoutMillis: Int

            enum CodingKeys: String, CodingKey {
                case command
                case timeoutMillis = "timeout_millis"
            }
        }

        enum CodingKeys: String, CodingKey {
            case type, audience
            case subjectTokenType = "subject_token_type"
            case tokenURL = "token_url"
            case impersonationURL = "service_account_impersonation_url"
            case source = "credential_source"
        }
    }
}

/// Google's executable response: what `gcp-credential` prints on stdout and writes to
/// `GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE`, a success with the ID token or the documented error form.
public struct GoogleExecutableResponse: Encodable, Sendable, Equatable {
    let version = 1
    public let success: Bool
    let tokenType: String?
    let idToken: String?
    /// Seconds since the epoch; the libraries need it to reuse an output file's answer.
    public let expirationTime: Int?
    let code: String?
    let message: String?

    /// A success with `idToken`, expiring at its `exp`. The token was verified when it was
    /// received; its claims are only read here.
    public init(idToken: Secret) throws(GoogleCredentialError) {
        let parts = idToken.exposedValue.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let expiry = (try? JSONDecoder().decode(IDTokenVerifier.Payload.self, from: payload))?.expiry
        else { throw .noExpiry }
        (success, tokenType, self.idToken, expirationTime) = (true, GoogleExternalAccount.idTokenType, idToken.exposedValue, Int(expiry))
        (code, message) = (nil, nil)
    }

    /// The error form: `code` says what kind of failure, `message` what `latchkey` would have
    /// said on stderr, made inert (the libraries put it in an exception a terminal may show).
    public init(failure code: String, message: String) {
        (success, tokenType, idToken, expirationTime) = (false, nil, nil, nil)
        self.code = code
        self.message = TerminalText.sanitized(message, maxLength: 1000)
    }

    enum CodingKeys: String, CodingKey {
        case version, success, code, message
        case tokenType = "token_type"
        case idToken = "id_token"
        case expirationTime = "expiration_time"
    }
}

public enum GoogleCredentialError: LatchkeyError, Equatable {
    case invalidAudience(String, problem: String)
    case invalidURL(String, option: String, problem: String)
    case unsplittableCommand(String)
    case commandNotFound(String)
    /// The library asked (`GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE`) for a token other than an ID token.
    case unsupportedTokenType(String)
    case noExpiry
    case exists(file: String)
    case cannotWrite(file: String, reason: String)

    public var category: FailureCategory {
        switch self {
        case .invalidAudience, .invalidURL, .unsplittableCommand, .commandNotFound, .unsupportedTokenType: return .usage
        case .noExpiry: return .rejected
        case .exists, .cannotWrite: return .cannotCreate
        }
    }

    public var description: String {
        switch self {
        case .invalidAudience(let audience, let problem):
            return "audience \"\(TerminalText.sanitized(audience, maxLength: 200))\" \(problem)"
        case .invalidURL(let url, let option, let problem):
            return "\(option) \"\(TerminalText.sanitized(url, maxLength: 200))\": \(problem)"
        case .unsplittableCommand(let word):
            return
                "\"\(TerminalText.sanitized(word, maxLength: 200))\" is empty or holds a space, which Google's libraries split the command at; pass --command with a path without spaces"
        case .commandNotFound(let command):
            return
                "--command \"\(TerminalText.sanitized(command, maxLength: 200))\" is neither an absolute path nor a program on PATH; Google's libraries need the absolute path"
        case .unsupportedTokenType(let type):
            return
                "the credential configuration asks for a \(TerminalText.sanitized(type, maxLength: 100)) token; Latchkey gives ID tokens: set subject_token_type to \(GoogleExternalAccount.idTokenType) (latchkey gcp-config writes it)"
        case .noExpiry:
            return "the account's ID token has no exp claim to say when it expires; sign in again"
        case .exists(let file):
            return
                "\(TerminalText.sanitized(file, maxLength: 200)) already exists; Latchkey never replaces it: choose another --output, or remove it"
        case .cannotWrite(let file, let reason):
            return "cannot write \(TerminalText.sanitized(file, maxLength: 200)): \(TerminalText.sanitized(reason, maxLength: 200))"
        }
    }
}
