public import Foundation
import LatchkeyEssentials
public import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault

/// One `AssumeRoleWithWebIdentity` call, its options resolved (`AWSRoleOptions.request`).
public struct AWSRoleRequest: Sendable, Equatable {
    public var roleARN: String
    public var sessionName: String
    public var duration: Int?
    public var endpoint: URL

    public init(roleARN: String, sessionName: String, duration: Int?, endpoint: URL) {
        self.roleARN = roleARN
        self.sessionName = sessionName
        self.duration = duration
        self.endpoint = endpoint
    }

    /// Whether `credential` was got for this role, session name and endpoint.
    func matches(_ credential: AWSRoleCredential) -> Bool {
        credential.isFor(roleARN: roleARN, sessionName: sessionName, endpoint: endpoint.absoluteString)
    }

    /// The unsigned form POST (the API takes no AWS signature: the token is the credential).
    func httpRequest(token: Secret) -> HTTPRequest {
        var pairs = [
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", roleARN), ("RoleSessionName", sessionName),
            ("WebIdentityToken", token.exposedValue),
        ]
        if let duration { pairs.append(("DurationSeconds", String(duration))) }
        return HTTPRequest(
            method: .post, url: endpoint, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "text/xml")],
            body: Array(FormEncoding.encode(pairs).utf8))
    }

    /// The credentials in STS's answer, or why there are none: an `ErrorResponse`'s `Code` and
    /// `Message`, or what is wrong with an answer that is neither.
    func credential(from response: HTTPResponse, now: Date) throws(AWSCredentialError) -> AWSRoleCredential {
        let host = endpoint.host ?? endpoint.absoluteString
        let root: StrictXML.Element
        do {
            root = try StrictXML.parse(response.body)
        } catch {
            throw response.status >= 500
                ? .stsUnavailable(host: host, status: response.status) : .malformedAnswer(host: host, error.description)
        }
        do {
            if root.name == "ErrorResponse", let error = try root.child("Error") {
                throw AWSCredentialError.stsRefused(
                    code: try error.child("Code")?.text ?? "", message: try error.child("Message")?.text ?? "", status: response.status)
            }
            guard (200..<300).contains(response.status) else {
                throw AWSCredentialError.malformedAnswer(host: host, "HTTP \(response.status) without an STS ErrorResponse")
            }
            guard root.name == "AssumeRoleWithWebIdentityResponse", let result = try root.child("AssumeRoleWithWebIdentityResult"),
                let credentials = try result.child("Credentials")
            else { throw AWSCredentialError.malformedAnswer(host: host, "no AssumeRoleWithWebIdentityResult with Credentials") }
            func field(_ name: String, limit: Int) throws -> String {
                guard let value = try credentials.child(name)?.text.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else {
                    throw AWSCredentialError.malformedAnswer(host: host, "no \(name)")
                }
                guard value.utf8.count <= limit, value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                    throw AWSCredentialError.malformedAnswer(host: host, "\(name) is not up to \(limit) visible ASCII characters")
                }
                return value
            }
            let expiration = try field("Expiration", limit: 64)
            guard let expiresAt = RFC3339.date(from: expiration) else {
                throw AWSCredentialError.malformedAnswer(host: host, "Expiration is not an RFC 3339 time")
            }
            guard expiresAt.timeIntervalSince(now) > AWSRoleCredential.margin else {
                throw AWSCredentialError.malformedAnswer(host: host, "the credentials expire within five minutes")
            }
            return AWSRoleCredential(
                roleARN: roleARN, sessionName: sessionName, endpoint: endpoint.absoluteString,
                accessKeyID: try field("AccessKeyId", limit: 128), secretAccessKey: Secret(try field("SecretAccessKey", limit: 1024)),
                sessionToken: Secret(try field("SessionToken", limit: 16 * 1024)), expiresAt: expiresAt, issuedAt: now)
        } catch let error as AWSCredentialError {
            throw error
        } catch let error as StrictXML.Problem {
            throw .malformedAnswer(host: host, error.description)
        } catch {
            throw .malformedAnswer(host: host, String(describing: error))
        }
    }
}

/// Why `latchkey aws-credential` has no credentials to print; nothing is kept in any case.
public enum AWSCredentialError: LatchkeyError, Equatable {
    case noRole(provider: String)
    case invalidRoleARN(String, problem: String)
    case invalidSessionName(String, problem: String)
    case invalidRegion(String)
    case invalidEndpoint(String, problem: String)
    /// The account has no token of the kind the provider file says STS gets.
    case noWebIdentityToken(account: String, provider: String, AWSSettings.WebIdentityToken)
    /// STS's `ErrorResponse`: its `Code` and `Message`, as STS wrote them.
    case stsRefused(code: String, message: String, status: Int)
    case stsUnavailable(host: String, status: Int)
    case malformedAnswer(host: String, String)

    public var category: FailureCategory {
        switch self {
        case .noRole, .invalidRoleARN, .invalidSessionName, .invalidRegion, .invalidEndpoint: return .usage
        case .noWebIdentityToken: return .notFound
        case .stsRefused(_, _, let status): return status >= 500 ? .unavailable : .rejected
        case .stsUnavailable: return .unavailable
        case .malformedAnswer: return .rejected
        }
    }

    public var description: String {
        switch self {
        case .noRole(let provider):
            return "no role to assume: pass --role-arn ARN, or set aws_role_arn in the provider file of \(provider)"
        case .invalidRoleARN(let arn, let problem):
            return "role ARN \"\(TerminalText.sanitized(arn, maxLength: 120))\" \(problem)"
        case .invalidSessionName(let name, let problem):
            return "session name \"\(TerminalText.sanitized(name, maxLength: 80))\" \(problem)"
        case .invalidRegion(let region):
            return
                "region \"\(TerminalText.sanitized(region, maxLength: 40))\" is not an AWS region name such as eu-west-1 (from aws_region or AWS_REGION)"
        case .invalidEndpoint(let url, let problem):
            return "STS endpoint \"\(TerminalText.sanitized(url, maxLength: 200))\": \(problem)"
        case .noWebIdentityToken(let account, let provider, .idToken):
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) has no ID token for STS; sign in to an OpenID Connect provider, or set aws_web_identity_token = \"access_token\" in its provider file if its access tokens are JWTs IAM can verify"
        case .noWebIdentityToken(let account, let provider, .accessToken):
            return "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) has no access token for STS; sign in again"
        case .stsRefused(let code, let message, _):
            let reason = message.isEmpty ? "" : ": \(TerminalText.sanitized(message, maxLength: 500))"
            return
                "STS refused AssumeRoleWithWebIdentity: \(TerminalText.sanitized(code.isEmpty ? "no Code" : code, maxLength: 80))\(reason)"
        case .stsUnavailable(let host, let status):
            return "STS at \(TerminalText.sanitized(host, maxLength: 200)) answered HTTP \(status); try again later"
        case .malformedAnswer(let host, let problem):
            return
                "STS at \(TerminalText.sanitized(host, maxLength: 200)) answered something that is not an AssumeRoleWithWebIdentity response: \(TerminalText.sanitized(problem, maxLength: 200)); nothing was kept"
        }
    }
}
