import FoundationEssentials
public import LatchkeyVault

/// What travels on `latchkey agent`'s sockets: one JSON object per line each way (the encoder
/// escapes line breaks inside strings, so a newline ends a message). A client sends one request;
/// the agent answers with zero or more interim lines (`pending`: waiting for a person to approve)
/// and then one final line, and closes. A `watch` request (the screen) stays open for the
/// confirmation requests the agent sends on it.
///
/// Here, in the module the launcher and the full command share, so both speak one protocol.
public enum AgentWire {
    /// The protocol's version, sent in every request; an agent refuses one it does not know.
    public static let version = 1
    /// The longest request line an agent reads, newline included: a request is a selector, a
    /// working directory (PATH_MAX is 4096) and a command line cut to `AgentRequest.Client`'s
    /// limit; anything longer is refused unread.
    public static let requestLimit = 16 * 1024
    /// The longest answer line a client reads: tokens of a few KiB, a status report of many accounts.
    public static let answerLimit = 1 << 20

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// `value` as one line, newline included.
    public static func line(_ value: some Encodable) throws -> [UInt8] {
        Array(try encoder.encode(value)) + [UInt8(ascii: "\n")]
    }

    /// A line without its newline, decoded.
    public static func decode<Value: Decodable>(_ type: Value.Type, from line: some Collection<UInt8>) throws -> Value {
        try JSONDecoder().decode(type, from: Data(line))
    }
}

/// One request to the agent.
public struct AgentRequest: Codable, Sendable, Equatable {
    /// What is asked. Only `token`, `status`, `git-credential`, `registry-credential`,
    /// `aws-credential` and `dpop-proof` are answered on a forwarded socket; the rest are for this
    /// machine's own commands (`latchkey approve`, the screen).
    public enum Operation: String, Codable, Sendable, CaseIterable {
        case token
        case status
        case gitCredential = "git-credential"
        case registryCredential = "registry-credential"
        case awsCredential = "aws-credential"
        /// A DPoP proof (RFC 9449) for one HTTP request, signed with the account's key, which
        /// never leaves the agent: for a client holding the account's bound token (`dpop`).
        case dpopProof = "dpop-proof"
        case approve
        case deny
        case watch
    }

    /// Which of an account's tokens a `token` request wants.
    public enum Tokens: String, Codable, Sendable {
        case access
        case id
        /// Both, from one grant (`latchkey exec --id-token`).
        case both
    }

    /// Who asks, in the client's own words: on a forwarded socket the agent cannot look at the
    /// process (it is on another machine), so this is what the confirmation prompt and the log
    /// show, marked as the client's claim.
    public struct Client: Codable, Sendable, Equatable {
        public var host: String?
        public var pid: Int32?
        /// The command that ran `latchkey` (its parent's command line), cut to `commandLimit`.
        public var command: String?

        public static let commandLimit = 512

        public init(host: String? = nil, pid: Int32? = nil, command: String? = nil) {
            self.host = host
            self.pid = pid
            self.command = command
        }
    }

    /// `aws`: what `aws-credential` asks for, its options as given on its command line (the
    /// agent fills in the rest from its provider file).
    public struct AWSRole: Codable, Sendable, Equatable {
        /// `role_arn`, `duration`, `session_name`, `sts_endpoint`: `--role-arn`, `--duration`,
        /// `--session-name`, `--sts-endpoint`.
        public var roleARN: String?
        public var duration: Int?
        public var sessionName: String?
        public var stsEndpoint: String?
        /// `env`: the client's `environmentKeys`, which choose the STS endpoint when neither the
        /// option nor the provider file does; heeded on the local socket only.
        public var environment: [String: String]?

        /// The variables of the AWS SDKs that choose an STS endpoint.
        public static let environmentKeys = ["AWS_ENDPOINT_URL_STS", "AWS_REGION", "AWS_DEFAULT_REGION"]

        enum CodingKeys: String, CodingKey {
            case roleARN = "role_arn"
            case duration
            case sessionName = "session_name"
            case stsEndpoint = "sts_endpoint"
            case environment = "env"
        }

        public init(
            roleARN: String? = nil, duration: Int? = nil, sessionName: String? = nil, stsEndpoint: String? = nil,
            environment: [String: String]? = nil
        ) {
            self.roleARN = roleARN
            self.duration = duration
            self.sessionName = sessionName
            self.stsEndpoint = stsEndpoint
            self.environment = environment
        }
    }

    /// `dpop`: the request a `dpop-proof` is for (RFC 9449 §4.2).
    public struct ProofTarget: Codable, Sendable, Equatable {
        /// `htm` and `htu`: the request's method and URL.
        public var method: String
        public var url: String
        /// The server's `DPoP-Nonce`, when it sent one (RFC 9449 §9).
        public var nonce: String?
        /// `ath`: the hash of the access token the request carries (`DPoPKey.accessTokenHash`);
        /// the agent signs only for the token it holds for the account now.
        public var tokenHash: String

        enum CodingKeys: String, CodingKey {
            case method = "htm"
            case url = "htu"
            case nonce
            case tokenHash = "ath"
        }

        public init(method: String, url: String, nonce: String? = nil, tokenHash: String) {
            self.method = method
            self.url = url
            self.nonce = nonce
            self.tokenHash = tokenHash
        }
    }

    /// `v`: `AgentWire.version`.
    public var version: Int
    /// `op`, as sent: an operation this agent does not know is answered with an error, not dropped.
    public var operation: String
    /// `PROVIDER[:ACCOUNT]` as the person typed it (`token`).
    public var selector: String?
    /// `min_ttl`, `--min-ttl`'s seconds.
    public var minimumLifetime: Int?
    public var tokens: Tokens?
    /// `resource` and `scope` (space-separated): a token narrowed to them (`--resource`, `--scope`).
    public var resource: String?
    public var scope: String?
    /// `cwd`: where the command runs, for config.toml's `[directories."PATH"]` (on a local
    /// socket only: a forwarded host's paths mean nothing here).
    public var workingDirectory: String?
    /// `git`: what git sent the credential helper, lines of `key=value`.
    public var git: String?
    /// `registry`: the server URL a container client sent `docker-credential-latchkey get`.
    public var registry: String?
    public var aws: AWSRole?
    /// `id`: the confirmation `approve` or `deny` answers.
    public var confirmation: Int?
    public var client: Client?
    /// `refused`: the `ath` (base64url SHA-256, RFC 9449 §4.2) of the access token a resource
    /// server just refused (HTTP 401). The agent refreshes the account when that is the token
    /// it holds, at most once per `Agent.forcedRefreshInterval`; a hash of another token gets the
    /// current one. A hash, so the request names the token without carrying it.
    public var refused: String?
    public var dpop: ProofTarget?

    /// What `resource` and `scope` ask for; `nil` for the account's own token.
    public var narrowing: TokenNarrowing? {
        guard resource != nil || scope != nil else { return nil }
        return TokenNarrowing(resource: resource, scopes: scope.map(TokenNarrowing.scopes) ?? [])
    }

    enum CodingKeys: String, CodingKey {
        case version = "v"
        case operation = "op"
        case selector
        case minimumLifetime = "min_ttl"
        case tokens
        case resource
        case scope
        case workingDirectory = "cwd"
        case git
        case registry
        case aws
        case confirmation = "id"
        case client
        case refused
        case dpop
    }

    public init(
        _ operation: Operation, selector: String? = nil, minimumLifetime: Int? = nil, tokens: Tokens? = nil,
        narrowing: TokenNarrowing? = nil, workingDirectory: String? = nil, git: String? = nil, registry: String? = nil,
        aws: AWSRole? = nil, confirmation: Int? = nil, client: Client? = nil, refused: String? = nil, dpop: ProofTarget? = nil
    ) {
        self.refused = refused
        self.dpop = dpop
        self.registry = registry
        self.aws = aws
        resource = narrowing?.resource
        scope = narrowing.flatMap { $0.scopes.isEmpty ? nil : $0.scopes.joined(separator: " ") }
        version = AgentWire.version
        self.operation = operation.rawValue
        self.selector = selector
        self.minimumLifetime = minimumLifetime
        self.tokens = tokens
        self.workingDirectory = workingDirectory
        self.git = git
        self.confirmation = confirmation
        self.client = client
    }
}

/// One line of the agent's answer.
public struct AgentAnswer: Codable, Sendable, Equatable {
    /// A request waiting for a person, sent on a `watch` connection and named in `pending` lines.
    public struct Confirmation: Codable, Sendable, Equatable {
        public var id: Int
        /// `PROVIDER:ACCOUNT`.
        public var account: String
        /// Who asks, as `Requester.description` says it.
        public var requester: String
        public var forwarded: Bool
        /// When the request is refused if nobody answers (Unix seconds).
        public var expiresAt: Int

        enum CodingKeys: String, CodingKey {
            case id, account, requester, forwarded
            case expiresAt = "expires_at"
        }

        public init(id: Int, account: String, requester: String, forwarded: Bool, expiresAt: Int) {
            self.id = id
            self.account = account
            self.requester = requester
            self.forwarded = forwarded
            self.expiresAt = expiresAt
        }
    }

    /// The request was answered (a final line); `false` with `message` and `exit` when refused.
    public var ok: Bool
    /// An interim line: `message` says what the agent waits for; the final line follows.
    public var pending: Bool?
    public var message: String?
    /// The exit status the client's command ends with when `ok` is false.
    public var exit: Int32?
    /// The account only a sign-in can help, as `latchkey login` takes it.
    public var signIn: String?
    /// The agent's vault: a client on the same machine with the same vault may sign in itself.
    public var vault: String?
    public var accessToken: Secret?
    /// `true` when `access_token` is DPoP-bound (RFC 9449): it goes only with a proof, never as
    /// a bearer token (`mcp headers` refuses it).
    public var proofBound: Bool?
    /// `dpop-proof`'s answer: the `DPoP` header's value for the request asked about.
    public var proof: Secret?
    public var idToken: Secret?
    /// `mcp_url`: the MCP server the account's provider file names (`latchkey mcp add`), sent
    /// with its access token: the token is bound to that URL (RFC 8707), and a host without the
    /// file (a forwarded one) learns where `mcp proxy` must send it from the agent, not from
    /// anything it chose.
    public var mcpURL: String?
    /// Unix seconds; absent when the provider gave no expiry.
    public var expiresAt: Int?
    public var provider: String?
    public var account: String?
    /// `git-credential`'s answer for git (`username=…`, `password=…` lines); absent when the
    /// host is not one the agent answers for, so git asks its other helpers.
    public var credential: Secret?
    /// `registry-credential`: the user name that goes with `access_token` (the provider's
    /// `registry_username`); absent, with no token, when no provider lists the registry.
    public var username: String?
    /// `aws-credential`: the role's credentials from STS, never the token they were got with.
    public var aws: AWSKeys?
    /// `status`: the `status --json` text and the lines `status` prints, of the accounts this
    /// connection may use.
    public var report: String?
    public var lines: [String]?
    /// On a `watch` connection: a request that waits for a person; `nil` id with `closed` once answered.
    public var confirmation: Confirmation?
    /// On a `watch` connection: a confirmation no longer waiting (answered, timed out, abandoned).
    public var closed: Int?

    enum CodingKeys: String, CodingKey {
        case ok, pending, message, exit, vault, provider, account, credential, username, aws, report, lines, confirmation, closed
        case proof = "dpop"
        case signIn = "sign_in"
        case accessToken = "access_token"
        case proofBound = "proof_bound"
        case idToken = "id_token"
        case mcpURL = "mcp_url"
        case expiresAt = "expires_at"
    }

    /// `aws`: short-lived AWS credentials, as an AWS `credential_process` prints them.
    public struct AWSKeys: Codable, Sendable, Equatable {
        public var accessKeyID: String
        public var secretAccessKey: Secret
        public var sessionToken: Secret
        /// STS's `Expiration`, in Unix seconds.
        public var expiration: Int

        enum CodingKeys: String, CodingKey {
            case accessKeyID = "access_key_id"
            case secretAccessKey = "secret_access_key"
            case sessionToken = "session_token"
            case expiration
        }

        public init(accessKeyID: String, secretAccessKey: Secret, sessionToken: Secret, expiration: Int) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
            self.expiration = expiration
        }
    }

    public init(ok: Bool) { self.ok = ok }

    /// A final refusal: `message` for the person, `exit` for the command.
    public static func failure(_ message: String, exit: Int32, signIn: String? = nil, vault: String? = nil) -> AgentAnswer {
        var answer = AgentAnswer(ok: false)
        answer.message = message
        answer.exit = exit
        answer.signIn = signIn
        answer.vault = vault
        return answer
    }

    /// An interim line saying what the agent waits for.
    public static func waiting(_ message: String) -> AgentAnswer {
        var answer = AgentAnswer(ok: false)
        answer.pending = true
        answer.message = message
        return answer
    }
}
