import FoundationEssentials
public import LatchkeyEssentials
public import LatchkeyVault

/// What every door asks the broker for, one type per operation: in process (`Broker`) and on the
/// agent's sockets alike (`BrokerWire`).
public enum BrokerRequest: Sendable, Equatable {
    case token(TokenRequest)
    case proof(ProofRequest)
    case awsCredential(AWSCredentialRequest)
    case gitCredential(GitRequest)
    case registryCredential(RegistryRequest)
    case status(StatusRequest)
    case approval(ApprovalRequest)
    /// The screen's connection: every release waiting for a person now and later
    /// (`BrokerAnswer.confirmation`, `.closed`), until it closes.
    case watch

    /// The key naming each operation on the wire.
    public var operation: String {
        switch self {
        case .token: return "token"
        case .proof: return "dpop_proof"
        case .awsCredential: return "aws_credential"
        case .gitCredential: return "git_credential"
        case .registryCredential: return "registry_credential"
        case .status: return "status"
        case .approval: return "approval"
        case .watch: return "watch"
        }
    }

    static let operations = [
        "token", "dpop_proof", "aws_credential", "git_credential", "registry_credential", "status", "approval", "watch",
    ]

    /// Whether a forwarded host may ask this at all: approvals and the screen's watch are for this
    /// machine's own commands.
    public var isForForwardedHosts: Bool {
        switch self {
        case .approval, .watch: return false
        default: return true
        }
    }
}

/// Who asks, in the client's own words: on a forwarded socket the agent cannot look at the
/// process (it is on another machine), so this is what the confirmation prompt and the log show,
/// marked as the client's claim.
public struct ClientClaim: Codable, Sendable, Equatable, WireObject {
    public var host: String?
    public var pid: Int32?
    /// The command that ran `latchkey` (its parent's command line), cut to `commandLimit`.
    public var command: String?

    public static let commandLimit = 512
    static let wireName = "client"

    public init(host: String? = nil, pid: Int32? = nil, command: String? = nil) {
        self.host = host
        self.pid = pid
        self.command = command
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case host, pid, command
    }
}

/// Which of an account's tokens a token request wants.
public enum TokenKind: String, Codable, Sendable {
    case access
    case id
    /// Both, from one grant (`latchkey exec --id-token`).
    case both
}

/// A token of one account: its own access or ID token, or an access token narrowed to a resource
/// and scopes (RFC 8707, RFC 6749 §6).
public struct TokenRequest: Codable, Sendable, Equatable, WireObject {
    /// `PROVIDER[:ACCOUNT]` as the person typed it.
    public var selector: String
    /// `min_ttl`: seconds the token must still be valid for, or it is refreshed first.
    public var minimumLifetime: Int
    public var tokens: TokenKind
    /// `resource` and `scope` (space-separated): a token narrowed to them.
    public var resource: String?
    public var scope: String?
    /// `refused`: the `ath` (base64url SHA-256, RFC 9449 §4.2) of the account's access token a
    /// resource server just refused (HTTP 401): the broker refreshes the account when that is the
    /// token it holds, at most once per `ForcedRefresh.interval`, and otherwise answers with the
    /// current one. A hash, so the request names the token without carrying it.
    public var refused: String?
    /// `acr` and `max_age`: a stronger or fresher sign-in (OpenID Connect Core §3.1.2.1).
    public var acrValues: [String]?
    public var maxAge: Int?
    /// `cwd`: where the command runs, for config.toml's `[directories."PATH"]` (heeded from a
    /// local client only: a forwarded host's paths mean nothing here).
    public var workingDirectory: String?

    static let wireName = "token request"

    public init(
        selector: String, minimumLifetime: Int = 60, tokens: TokenKind = .access, narrowing: TokenNarrowing? = nil, refused: String? = nil,
        acrValues: [String]? = nil, maxAge: Int? = nil, workingDirectory: String? = nil
    ) {
        self.selector = selector
        self.minimumLifetime = minimumLifetime
        self.tokens = tokens
        resource = narrowing?.resource
        scope = narrowing.flatMap { $0.scopes.isEmpty ? nil : $0.scopes.joined(separator: " ") }
        self.refused = refused
        self.acrValues = acrValues
        self.maxAge = maxAge
        self.workingDirectory = workingDirectory
    }

    /// What `resource` and `scope` ask for; `nil` for the account's own token.
    public var narrowing: TokenNarrowing? {
        guard resource != nil || scope != nil else { return nil }
        return TokenNarrowing(resource: resource, scopes: scope.map(TokenNarrowing.scopes) ?? [])
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case selector
        case minimumLifetime = "min_ttl"
        case tokens, resource, scope, refused
        case acrValues = "acr_values"
        case maxAge = "max_age"
        case workingDirectory = "cwd"
    }

    /// `min_ttl` and `tokens` may be left out: 60 seconds, the access token.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        selector = try container.decode(String.self, forKey: .selector)
        minimumLifetime = try container.decodeIfPresent(Int.self, forKey: .minimumLifetime) ?? 60
        tokens = try container.decodeIfPresent(TokenKind.self, forKey: .tokens) ?? .access
        resource = try container.decodeIfPresent(String.self, forKey: .resource)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        refused = try container.decodeIfPresent(String.self, forKey: .refused)
        acrValues = try container.decodeIfPresent([String].self, forKey: .acrValues)
        maxAge = try container.decodeIfPresent(Int.self, forKey: .maxAge)
        workingDirectory = try container.decodeIfPresent(String.self, forKey: .workingDirectory)
    }
}

/// A DPoP proof (RFC 9449 §4.2) for one HTTP request, signed with the account's key, which never
/// leaves the broker: for a client holding the account's bound token.
public struct ProofRequest: Codable, Sendable, Equatable, WireObject {
    public var selector: String
    /// `htm` and `htu`: the request's method and URL.
    public var method: String
    public var url: String
    /// The server's `DPoP-Nonce`, when it sent one (RFC 9449 §9).
    public var nonce: String?
    /// `ath`: the hash of the access token the request carries (`DPoPKey.accessTokenHash`); a
    /// proof is signed only for the token the broker holds for the account now.
    public var tokenHash: String
    public var workingDirectory: String?

    static let wireName = "DPoP proof request"

    public init(selector: String, method: String, url: String, nonce: String? = nil, tokenHash: String, workingDirectory: String? = nil) {
        self.selector = selector
        self.method = method
        self.url = url
        self.nonce = nonce
        self.tokenHash = tokenHash
        self.workingDirectory = workingDirectory
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case selector
        case method = "htm"
        case url = "htu"
        case nonce
        case tokenHash = "ath"
        case workingDirectory = "cwd"
    }
}

/// AWS credentials for a role, from STS with the account's web identity token, which stays with
/// the broker: the client gets only the credentials.
public struct AWSCredentialRequest: Codable, Sendable, Equatable, WireObject {
    public var selector: String
    public var options: AWSRoleOptions
    public var minimumLifetime: Int
    /// The client's `AWSRoleOptions.environmentNames` that are set: heeded from a local client only.
    public var environment: [String: String]
    public var workingDirectory: String?

    static let wireName = "AWS credential request"

    public init(
        selector: String, options: AWSRoleOptions, minimumLifetime: Int = 60, environment: [String: String] = [:],
        workingDirectory: String? = nil
    ) {
        self.selector = selector
        self.options = options
        self.minimumLifetime = minimumLifetime
        self.environment = environment
        self.workingDirectory = workingDirectory
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case selector, options
        case minimumLifetime = "min_ttl"
        case environment = "env"
        case workingDirectory = "cwd"
    }

    /// Only `selector` is needed: no options, 60 seconds, no variables.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        selector = try container.decode(String.self, forKey: .selector)
        options = try container.decodeIfPresent(AWSRoleOptions.self, forKey: .options) ?? AWSRoleOptions()
        minimumLifetime = try container.decodeIfPresent(Int.self, forKey: .minimumLifetime) ?? 60
        environment = try container.decodeIfPresent([String: String].self, forKey: .environment) ?? [:]
        workingDirectory = try container.decodeIfPresent(String.self, forKey: .workingDirectory)
    }
}

/// What git sent a credential helper (gitcredentials(7)), for a host in a provider's `git_hosts`.
public struct GitRequest: Codable, Sendable, Equatable, WireObject {
    /// git's `key=value` lines.
    public var attributes: String
    public var minimumLifetime: Int
    /// `resource` and `scope`: replace the provider's `git_resource`, or narrow the token.
    public var resource: String?
    public var scope: String?
    public var workingDirectory: String?

    static let wireName = "git credential request"

    public init(attributes: String, minimumLifetime: Int = 60, narrowing: TokenNarrowing? = nil, workingDirectory: String? = nil) {
        self.attributes = attributes
        self.minimumLifetime = minimumLifetime
        resource = narrowing?.resource
        scope = narrowing.flatMap { $0.scopes.isEmpty ? nil : $0.scopes.joined(separator: " ") }
        self.workingDirectory = workingDirectory
    }

    public var narrowing: TokenNarrowing? {
        guard resource != nil || scope != nil else { return nil }
        return TokenNarrowing(resource: resource, scopes: scope.map(TokenNarrowing.scopes) ?? [])
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case attributes
        case minimumLifetime = "min_ttl"
        case resource, scope
        case workingDirectory = "cwd"
    }

    /// `min_ttl` may be left out: 60 seconds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        attributes = try container.decode(String.self, forKey: .attributes)
        minimumLifetime = try container.decodeIfPresent(Int.self, forKey: .minimumLifetime) ?? 60
        resource = try container.decodeIfPresent(String.self, forKey: .resource)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        workingDirectory = try container.decodeIfPresent(String.self, forKey: .workingDirectory)
    }
}

/// A container registry's credential, for a host in a provider's `registry_hosts`.
public struct RegistryRequest: Codable, Sendable, Equatable, WireObject {
    /// The server URL the client sent `docker-credential-latchkey get`.
    public var server: String
    public var minimumLifetime: Int
    public var workingDirectory: String?

    static let wireName = "registry credential request"

    public init(server: String, minimumLifetime: Int = 60, workingDirectory: String? = nil) {
        self.server = server
        self.minimumLifetime = minimumLifetime
        self.workingDirectory = workingDirectory
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case server
        case minimumLifetime = "min_ttl"
        case workingDirectory = "cwd"
    }

    /// `min_ttl` may be left out: 60 seconds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        server = try container.decode(String.self, forKey: .server)
        minimumLifetime = try container.decodeIfPresent(Int.self, forKey: .minimumLifetime) ?? 60
        workingDirectory = try container.decodeIfPresent(String.self, forKey: .workingDirectory)
    }
}

/// `latchkey status` of the accounts the asker may use.
public struct StatusRequest: Codable, Sendable, Equatable, WireObject {
    public var workingDirectory: String?

    static let wireName = "status request"

    public init(workingDirectory: String? = nil) { self.workingDirectory = workingDirectory }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case workingDirectory = "cwd"
    }
}

/// A person's answer to a release waiting for approval (`latchkey approve N`, `deny N`, the screen).
public struct ApprovalRequest: Codable, Sendable, Equatable, WireObject {
    public var id: Int
    public var approve: Bool

    static let wireName = "approval"

    public init(id: Int, approve: Bool) {
        self.id = id
        self.approve = approve
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, approve
    }
}

// MARK: - On the wire

extension BrokerRequest {
    /// The request as one line, with who asks.
    public func line(client: ClientClaim?) throws -> [UInt8] {
        try BrokerWire.line(Envelope(request: self, client: client))
    }

    /// A request line, checked strictly (`BrokerWire`); with who it says is asking.
    public static func decode(_ line: some Collection<UInt8>) throws(WireMismatch) -> (request: BrokerRequest, client: ClientClaim?) {
        let reader = try WireReader(line, kind: "request")
        let client = reader.fields["client"] == nil ? nil : try reader.object(ClientClaim.self, at: "client")
        let operation = try reader.operation(among: operations, besides: ["client"])
        let request: BrokerRequest
        switch operation {
        case "token": request = .token(try reader.object(TokenRequest.self, at: operation))
        case "dpop_proof": request = .proof(try reader.object(ProofRequest.self, at: operation))
        case "aws_credential":
            let asked = try reader.object(AWSCredentialRequest.self, at: operation)
            if let options = reader.fields[operation]?.fields?["options"]?.fields,
                let field = options.keys.sorted().first(where: { !AWSRoleOptions.fieldNames.contains($0) })
            {
                throw WireMismatch(.unknownField(field, object: "AWS role options"), kind: "request")
            }
            request = .awsCredential(asked)
        case "git_credential": request = .gitCredential(try reader.object(GitRequest.self, at: operation))
        case "registry_credential": request = .registryCredential(try reader.object(RegistryRequest.self, at: operation))
        case "status": request = .status(try reader.object(StatusRequest.self, at: operation))
        case "approval": request = .approval(try reader.object(ApprovalRequest.self, at: operation))
        default:
            guard reader.fields[operation]?.fields?.isEmpty == true else {
                throw WireMismatch(.malformedField(object: "watch", reason: "it takes no fields"), kind: "request")
            }
            request = .watch
        }
        return (request, client)
    }

    private struct Envelope: Encodable {
        var request: BrokerRequest
        var client: ClientClaim?

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
            try container.encodeIfPresent(client, forKey: Key("client"))
            let key = Key(request.operation)
            switch request {
            case .token(let payload): try container.encode(payload, forKey: key)
            case .proof(let payload): try container.encode(payload, forKey: key)
            case .awsCredential(let payload): try container.encode(payload, forKey: key)
            case .gitCredential(let payload): try container.encode(payload, forKey: key)
            case .registryCredential(let payload): try container.encode(payload, forKey: key)
            case .status(let payload): try container.encode(payload, forKey: key)
            case .approval(let payload): try container.encode(payload, forKey: key)
            case .watch: try container.encode([String: String](), forKey: key)
            }
        }
    }
}
