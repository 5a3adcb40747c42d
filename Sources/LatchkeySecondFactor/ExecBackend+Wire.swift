import LatchkeySupport

/// The lines of latchkey-mfa-plugin(7): one request object written to the program, one answer
/// object read back.
extension ExecBackend {
    /// A request (REQUESTS in the manual): `version`, `provider` and `type`, and the members that
    /// type takes; absent ones are left out of the line.
    struct PluginRequest: Encodable {
        let version = ExecBackend.protocolVersion
        /// The provider's name, so one program can serve several providers.
        var provider: String
        /// `first_factor`, `start`, `finalize`, `enroll_start`, `enroll_finalize` or `refresh`.
        var type: String
        /// `first_factor`: `password` or `federated`.
        var method: String?
        var email: String?
        var password: String?
        var providerID: String?
        var idToken: String?
        var pending: String?
        var hint: Hint?
        var session: String?
        var code: String?
        var phoneNumber: String?
        var displayName: String?
        var refreshToken: String?

        init(_ type: String, provider: String) {
            self.type = type
            self.provider = provider
        }

        /// The factor a `start` or `finalize` is about: `{"id", "kind"}`.
        struct Hint: Encodable {
            var id: String
            var kind: String

            init(_ hint: SecondFactorHint) {
                id = hint.id
                kind = hint.kind.rawValue
            }
        }

        enum CodingKeys: String, CodingKey {
            case version, provider, type, method, email, password
            case providerID = "provider_id"
            case idToken = "id_token"
            case pending, hint, session, code
            case phoneNumber = "phone_number"
            case displayName = "display_name"
            case refreshToken = "refresh_token"
        }
    }

    /// An answer (ANSWERS in the manual) of any type. Read forgivingly, member by member: what a
    /// type needs is checked where it is used, with a message naming the member.
    struct PluginAnswer: Decodable {
        /// `tokens`, `hints`, `session` or `error`.
        var type: String?
        /// `error`
        var code: String?
        var message: String?
        /// `hints`
        var pending: String?
        var hints: [Hint]?
        /// `session`
        var session: String?
        /// `tokens`
        var idToken: String?
        var refreshToken: String?
        /// `expires_in`: seconds (`WireLifetime`); anything else counts as absent.
        var expiresIn: Int?
        var secondFactor: String?
        var account: Account?

        enum CodingKeys: String, CodingKey {
            case type, code, message, pending, hints, session
            case idToken = "id_token"
            case refreshToken = "refresh_token"
            case expiresIn = "expires_in"
            case secondFactor = "second_factor"
            case account
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = container.lenient(forKey: .type)
            code = container.lenient(forKey: .code)
            message = container.lenient(forKey: .message)
            pending = container.lenient(forKey: .pending)
            hints = container.lenient(forKey: .hints)
            session = container.lenient(forKey: .session)
            idToken = container.lenient(forKey: .idToken)
            refreshToken = container.lenient(forKey: .refreshToken)
            expiresIn = container.lenient(WireLifetime.self, forKey: .expiresIn)?.seconds
            secondFactor = container.lenient(forKey: .secondFactor)
            account = container.lenient(forKey: .account)
        }

        /// One member of `hints`: `id`, `kind`, and optionally `display_name` and `phone_number`.
        struct Hint: Decodable {
            var id: String?
            var kind: String?
            var displayName: String?
            var phoneNumber: String?

            enum CodingKeys: String, CodingKey {
                case id, kind
                case displayName = "display_name"
                case phoneNumber = "phone_number"
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                id = container.lenient(forKey: .id)
                kind = container.lenient(forKey: .kind)
                displayName = container.lenient(forKey: .displayName)
                phoneNumber = container.lenient(forKey: .phoneNumber)
            }
        }

        /// `account`: who signed in, as the plugin reports it.
        struct Account: Decodable {
            var issuer: String?
            var subject: String?
            var displayName: String?

            enum CodingKeys: String, CodingKey {
                case issuer, subject
                case displayName = "display_name"
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                issuer = container.lenient(forKey: .issuer)
                subject = container.lenient(forKey: .subject)
                displayName = container.lenient(forKey: .displayName)
            }
        }
    }
}
