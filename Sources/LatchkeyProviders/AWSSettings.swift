public import Foundation
import LatchkeyEssentials
import LatchkeyVault

/// The provider file's AWS defaults (`aws_role_arn`, `aws_roles`, `aws_region`, `aws_sts_endpoint`,
/// `aws_web_identity_token`), which `latchkey aws-credential`'s options override.
public struct AWSSettings: Sendable, Equatable {
    /// Which of the account's tokens STS gets as the web identity token.
    public enum WebIdentityToken: String, Sendable, CaseIterable {
        /// The ID token: what an OIDC identity provider registered in IAM verifies.
        case idToken = "id_token"
        /// The access token, for providers whose access tokens are JWTs IAM can verify.
        case accessToken = "access_token"
    }

    public var roleARN: String?
    /// `aws_roles`: further roles a forwarded host may ask the agent for (`listedRoles`).
    public var roles: [String] = []
    public var region: String?
    public var stsEndpoint: URL?
    public var webIdentityToken = WebIdentityToken.idToken

    public init(
        roleARN: String? = nil, roles: [String] = [], region: String? = nil, stsEndpoint: URL? = nil,
        webIdentityToken: WebIdentityToken = .idToken
    ) {
        self.roleARN = roleARN
        self.roles = roles
        self.region = region
        self.stsEndpoint = stsEndpoint
        self.webIdentityToken = webIdentityToken
    }

    /// The roles the provider file names (`aws_role_arn`, then `aws_roles`): the only roles the
    /// agent assumes for a forwarded host, which must not choose what the vault keeps or which
    /// roles the account's ID token opens.
    public var listedRoles: [String] { (roleARN.map { [$0] } ?? []) + roles }
}

/// What STS accepts, checked before anything is sent, so a typo is named here rather than in
/// STS's `ValidationError`.
public enum AWSNames {
    /// Why `text` is not an IAM role ARN (`arn:PARTITION:iam::ACCOUNT:role/[PATH/]NAME`), or `nil`.
    public static func roleARNProblem(_ text: String) -> String? {
        let parts = text.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
        let rule = "must be an IAM role ARN such as arn:aws:iam::123456789012:role/NAME"
        guard text.utf8.count <= 2048, parts.count == 6, parts[0] == "arn", parts[2] == "iam", parts[3].isEmpty else { return rule }
        guard !parts[1].isEmpty, parts[1].utf8.allSatisfy({ isLowercaseLetter($0) || $0 == UInt8(ascii: "-") }) else { return rule }
        guard parts[4].utf8.count == 12, parts[4].utf8.allSatisfy(isDigit) else { return "\(rule) (the account is 12 digits)" }
        guard parts[5].hasPrefix("role/"), parts[5].count > 5, parts[5].utf8.allSatisfy({ isNameByte($0) || $0 == UInt8(ascii: "/") }),
            !parts[5].hasSuffix("/")
        else { return "\(rule) (a role name is letters, digits and +=,.@_-)" }
        return nil
    }

    /// Why `text` is not an STS role session name (2–64 of `[\w+=,.@-]`), or `nil`.
    public static func sessionNameProblem(_ text: String) -> String? {
        guard (2...64).contains(text.utf8.count), text.utf8.allSatisfy(isNameByte) else {
            return "must be 2 to 64 letters, digits and +=,.@_- (STS's RoleSessionName)"
        }
        return nil
    }

    /// A session name from an account's label (usually an email address): every character STS
    /// does not take becomes `-`, cut to 64; a label with too little left gives `latchkey`.
    public static func sessionName(from label: String) -> String {
        let bytes = label.unicodeScalars.map { $0.isASCII && isNameByte(UInt8($0.value)) ? UInt8($0.value) : UInt8(ascii: "-") }
        let name = String(decoding: bytes.prefix(64), as: UTF8.self)
        return name.count >= 2 && name.contains(where: { $0 != "-" }) ? name : "latchkey"
    }

    /// An AWS region name (`eu-west-1`): what may stand in `sts.REGION.amazonaws.com`.
    public static func isRegion(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { isLowercaseLetter($0) || isDigit($0) || $0 == UInt8(ascii: "-") }
            && !text.hasPrefix("-") && !text.hasSuffix("-")
    }

    /// The durations STS's `DurationSeconds` takes: 15 minutes to 12 hours.
    public static let durations = 900...43_200

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isLowercaseLetter(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || isDigit(byte) || "+=,.@_-".utf8.contains(byte)
    }
    private static func isLowercaseLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
