/// What `aws-credential` asks for beyond the account, as given on its command line: one type from
/// the command line through the launcher and the broker's wire to the agent, which the provider
/// file (`aws_role_arn`, `aws_sts_endpoint`, `aws_region`) and the environment then fill in.
public struct AWSRoleOptions: Sendable, Hashable, Codable {
    /// `--role-arn`: the role to assume.
    public var roleARN: String?
    /// `--duration`: the credentials' lifetime in seconds (STS takes 900 to 43200).
    public var duration: Int?
    /// `--session-name`: the role session name.
    public var sessionName: String?
    /// `--sts-endpoint`: STS's URL.
    public var stsEndpoint: String?

    /// The variables of the AWS SDKs that choose an STS endpoint when neither `--sts-endpoint`
    /// nor the provider file does: the answer depends on them, so the launcher's kept answer is
    /// keyed by them too, and an agent heeds them from a client on its own machine only.
    public static let environmentNames = [endpointVariable] + regionVariables
    /// The AWS SDKs' variable naming STS's URL.
    public static let endpointVariable = "AWS_ENDPOINT_URL_STS"
    /// The AWS SDKs' variables naming the region, the first set winning.
    public static let regionVariables = ["AWS_REGION", "AWS_DEFAULT_REGION"]

    public init(roleARN: String? = nil, duration: Int? = nil, sessionName: String? = nil, stsEndpoint: String? = nil) {
        self.roleARN = roleARN
        self.duration = duration
        self.sessionName = sessionName
        self.stsEndpoint = stsEndpoint
    }

    /// The options in a fixed order, each `nil` when not given: what the key of a kept answer is
    /// made of (`TokenCopy.awsAnswerKeyDescription`).
    public var keyParts: [String?] { [roleARN, duration.map { String($0) }, sessionName, stsEndpoint] }

    /// The values of `environmentNames` that `lookup` finds set and not empty.
    public static func environment(_ lookup: (String) -> String?) -> [String: String] {
        var values: [String: String] = [:]
        for name in environmentNames {
            if let value = lookup(name), !value.isEmpty { values[name] = value }
        }
        return values
    }

    /// The fields on the wire, for a reader that refuses others.
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))

    enum CodingKeys: String, CodingKey, CaseIterable {
        case roleARN = "role_arn"
        case duration
        case sessionName = "session_name"
        case stsEndpoint = "sts_endpoint"
    }
}
