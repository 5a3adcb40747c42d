import FoundationEssentials
public import LatchkeyVault

/// What the broker answers, one type per operation, in process and on the wire: a release, a
/// refusal, and on the agent's sockets the lines on the way (a person being asked, the screen's
/// events).
public enum BrokerAnswer: Sendable, Equatable {
    case token(TokenRelease)
    case proof(ProofRelease)
    case awsCredential(AWSRelease)
    case gitCredential(GitRelease)
    case registryCredential(RegistryRelease)
    case status(StatusReply)
    /// The person's answer was taken.
    case approval
    /// Nothing released, and why (a final line).
    case refused(BrokerRefusal)
    /// An interim line: what the agent waits for (a person's approval); the final line follows.
    case pending(String)
    /// On a `watch` connection: a release that waits for a person.
    case confirmation(WaitingRelease)
    /// On a `watch` connection: a release no longer waiting (answered, timed out, abandoned).
    case closed(Int)

    /// Whether the exchange ends with this line.
    public var isFinal: Bool {
        switch self {
        case .pending, .confirmation, .closed: return false
        default: return true
        }
    }

    var key: String {
        switch self {
        case .token: return "token"
        case .proof: return "dpop_proof"
        case .awsCredential: return "aws_credential"
        case .gitCredential: return "git_credential"
        case .registryCredential: return "registry_credential"
        case .status: return "status"
        case .approval: return "approval"
        case .refused: return "refused"
        case .pending: return "pending"
        case .confirmation: return "confirmation"
        case .closed: return "closed"
        }
    }

    static let keys = [
        "token", "dpop_proof", "aws_credential", "git_credential", "registry_credential", "status", "approval", "refused", "pending",
        "confirmation", "closed",
    ]
}

/// A token released: the account's own access or ID token (or both), or a narrowed one.
public struct TokenRelease: Codable, Sendable, Equatable, WireObject {
    public var provider: String
    /// The account's label (its name, else its subject), as people read it.
    public var account: String
    /// The account's subject: `PROVIDER:SUBJECT` selects exactly this account (`LATCHKEY_ACCOUNT`).
    public var subject: String
    public var accessToken: Secret?
    public var idToken: Secret?
    /// Unix seconds; absent when the provider gave no expiry.
    public var expiresAt: Int?
    /// The access token is DPoP-bound (RFC 9449): it goes only with a proof, as `DPoP`, never as
    /// a bearer token.
    public var proofBound: Bool
    /// `mcp_url`: the MCP server the account's provider file names, the one URL its token is
    /// bound to (RFC 8707), so a host without the file (a forwarded one) learns where `mcp proxy`
    /// must send it from the broker, not from anything it chose.
    public var mcpURL: String?

    static let wireName = "token release"

    public init(
        provider: String, account: String, subject: String, accessToken: Secret? = nil, idToken: Secret? = nil, expiresAt: Int? = nil,
        proofBound: Bool = false, mcpURL: String? = nil
    ) {
        self.provider = provider
        self.account = account
        self.subject = subject
        self.accessToken = accessToken
        self.idToken = idToken
        self.expiresAt = expiresAt
        self.proofBound = proofBound
        self.mcpURL = mcpURL
    }

    /// `Bearer` or `DPoP`: the `Authorization` scheme the access token goes with (RFC 9449 §7.1).
    public var tokenType: String { proofBound ? "DPoP" : "Bearer" }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case provider, account, subject
        case accessToken = "access_token"
        case idToken = "id_token"
        case expiresAt = "expires_at"
        case proofBound = "proof_bound"
        case mcpURL = "mcp_url"
    }
}

/// A DPoP proof for the request asked about: the `DPoP` header's value.
public struct ProofRelease: Codable, Sendable, Equatable, WireObject {
    public var provider: String
    public var account: String
    public var proof: Secret

    static let wireName = "DPoP proof release"

    public init(provider: String, account: String, proof: Secret) {
        self.provider = provider
        self.account = account
        self.proof = proof
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case provider, account, proof
    }
}

/// Short-lived AWS credentials, as an AWS `credential_process` prints them; never the token they
/// were got with.
public struct AWSRelease: Codable, Sendable, Equatable, WireObject {
    public var provider: String
    public var account: String
    public var accessKeyID: String
    public var secretAccessKey: Secret
    public var sessionToken: Secret
    /// STS's `Expiration`, in Unix seconds.
    public var expiration: Int

    static let wireName = "AWS credential release"

    public init(provider: String, account: String, accessKeyID: String, secretAccessKey: Secret, sessionToken: Secret, expiration: Int) {
        self.provider = provider
        self.account = account
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case provider, account
        case accessKeyID = "access_key_id"
        case secretAccessKey = "secret_access_key"
        case sessionToken = "session_token"
        case expiration
    }
}

/// git's answer (`username=…`, `password=…` lines); `nil` when no provider maps the host, so git
/// asks its other helpers.
public struct GitRelease: Codable, Sendable, Equatable, WireObject {
    public var credential: Secret?

    static let wireName = "git credential release"

    public init(credential: Secret?) { self.credential = credential }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case credential
    }
}

/// A registry's user name and token; both `nil` when no provider lists the registry.
public struct RegistryRelease: Codable, Sendable, Equatable, WireObject {
    /// The provider's `registry_username`, which goes with the token.
    public var username: String?
    public var token: Secret?

    static let wireName = "registry credential release"

    public init(username: String?, token: Secret?) {
        self.username = username
        self.token = token
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case username, token
    }
}

/// `status --json`'s text and the lines `status` prints, of the accounts the asker may use, and
/// what is wrong with config.toml's directory mappings where the command runs (this machine only).
public struct StatusReply: Codable, Sendable, Equatable, WireObject {
    public var report: String
    public var lines: [String]
    public var warnings: [String]

    static let wireName = "status"

    public init(report: String, lines: [String], warnings: [String] = []) {
        self.report = report
        self.lines = lines
        self.warnings = warnings
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case report, lines, warnings
    }
}

/// Why nothing was released: the message for the person, the kind of failure (which the command
/// turns into its exit status, `FailureCategory.exitStatus`), and when only a sign-in can help,
/// the account to sign in and the vault it is kept in.
public struct BrokerRefusal: Codable, Sendable, Equatable, WireObject, LatchkeyError {
    public var message: String
    public var category: FailureCategory
    /// `PROVIDER:ACCOUNT` as `latchkey login` takes it.
    public var signIn: String?
    /// The agent's vault: a client on the same machine with the same vault may sign in itself.
    public var vault: String?

    static let wireName = "refusal"

    public init(message: String, category: FailureCategory, signIn: String? = nil, vault: String? = nil) {
        self.message = message
        self.category = category
        self.signIn = signIn
        self.vault = vault
    }

    public var description: String { message }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case message, category
        case signIn = "sign_in"
        case vault
    }
}

/// A release waiting for a person, as the screen and `latchkey approve` see it.
public struct WaitingRelease: Codable, Sendable, Equatable, WireObject {
    public var id: Int
    /// `PROVIDER:ACCOUNT`.
    public var account: String
    /// Who asks, as `Requester.description` says it.
    public var requester: String
    public var forwarded: Bool
    /// When the request is refused if nobody answers (Unix seconds).
    public var expiresAt: Int

    static let wireName = "confirmation"

    public init(id: Int, account: String, requester: String, forwarded: Bool, expiresAt: Int) {
        self.id = id
        self.account = account
        self.requester = requester
        self.forwarded = forwarded
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, account, requester, forwarded
        case expiresAt = "expires_at"
    }
}

// MARK: - On the wire

extension BrokerAnswer {
    /// The answer as one line.
    public func line() throws -> [UInt8] { try BrokerWire.line(Envelope(answer: self)) }

    /// An answer line, checked strictly (`BrokerWire`).
    public static func decode(_ line: some Collection<UInt8>) throws(WireMismatch) -> BrokerAnswer {
        let reader = try WireReader(line, kind: "answer")
        let key = try reader.operation(among: keys, besides: [])
        switch key {
        case "token": return .token(try reader.object(TokenRelease.self, at: key))
        case "dpop_proof": return .proof(try reader.object(ProofRelease.self, at: key))
        case "aws_credential": return .awsCredential(try reader.object(AWSRelease.self, at: key))
        case "git_credential": return .gitCredential(try reader.object(GitRelease.self, at: key))
        case "registry_credential": return .registryCredential(try reader.object(RegistryRelease.self, at: key))
        case "status": return .status(try reader.object(StatusReply.self, at: key))
        case "approval":
            guard reader.fields[key]?.fields?.isEmpty == true else {
                throw WireMismatch(.malformedField(object: "approval", reason: "it takes no fields"), kind: "answer")
            }
            return .approval
        case "refused": return .refused(try reader.object(BrokerRefusal.self, at: key))
        case "pending": return .pending(try reader.value(String.self, at: key))
        case "confirmation": return .confirmation(try reader.object(WaitingRelease.self, at: key))
        default: return .closed(try reader.value(Int.self, at: key))
        }
    }

    private struct Envelope: Encodable {
        var answer: BrokerAnswer

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(BrokerWire.version, forKey: Key("v"))
            let key = Key(answer.key)
            switch answer {
            case .token(let payload): try container.encode(payload, forKey: key)
            case .proof(let payload): try container.encode(payload, forKey: key)
            case .awsCredential(let payload): try container.encode(payload, forKey: key)
            case .gitCredential(let payload): try container.encode(payload, forKey: key)
            case .registryCredential(let payload): try container.encode(payload, forKey: key)
            case .status(let payload): try container.encode(payload, forKey: key)
            case .approval: try container.encode([String: String](), forKey: key)
            case .refused(let payload): try container.encode(payload, forKey: key)
            case .pending(let message): try container.encode(message, forKey: key)
            case .confirmation(let payload): try container.encode(payload, forKey: key)
            case .closed(let id): try container.encode(id, forKey: key)
            }
        }
    }
}
