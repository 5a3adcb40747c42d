package import Foundation
public import LatchkeyAccounts
import LatchkeyBrokerWire
public import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeyOAuth
package import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault

/// `latchkey aws-credential`'s options, before the provider file's defaults and the environment
/// fill them in.
extension AWSRoleOptions {
    /// The endpoint when neither the option nor the provider file names one: the AWS SDKs'
    /// `AWS_ENDPOINT_URL_STS`, else the regional endpoint of `aws_region`, `AWS_REGION` or
    /// `AWS_DEFAULT_REGION`, else the global one.
    static func defaultEndpoint(region: String?, environment: [String: String]) throws(AWSCredentialError) -> URL {
        if let raw = environment[endpointVariable], !raw.isEmpty { return try endpoint(raw) }
        guard
            let region = region ?? regionVariables.compactMap({ environment[$0] }).first(where: { !$0.isEmpty })
        else { return URL(string: "https://sts.amazonaws.com")! }
        guard AWSNames.isRegion(region) else { throw .invalidRegion(region) }
        return URL(string: "https://sts.\(region).amazonaws.com")!
    }

    /// An STS endpoint named by the person: https, or http to a loopback host (a local STS such as moto's).
    package static func endpoint(_ raw: String) throws(AWSCredentialError) -> URL {
        switch EndpointURL.validate(raw) {
        case .success(let url): return url
        case .failure(let problem): throw .invalidEndpoint(raw, problem: problem.description)
        }
    }

    /// The options checked, before any account is touched: a malformed role, session name,
    /// duration or endpoint costs no sign-in.
    package func checked(settings: AWSSettings, provider: String, environment: [String: String]) throws(AWSCredentialError) -> (
        roleARN: String, endpoint: URL
    ) {
        guard let roleARN = roleARN ?? settings.roleARN else { throw .noRole(provider: provider) }
        if let problem = AWSNames.roleARNProblem(roleARN) { throw .invalidRoleARN(roleARN, problem: problem) }
        if let sessionName, let problem = AWSNames.sessionNameProblem(sessionName) {
            throw .invalidSessionName(sessionName, problem: problem)
        }
        if let stsEndpoint { return (roleARN, try Self.endpoint(stsEndpoint)) }
        if let endpoint = settings.stsEndpoint { return (roleARN, endpoint) }
        return (roleARN, try Self.defaultEndpoint(region: settings.region, environment: environment))
    }
}

extension AccountService {
    /// AWS credentials for `options`' role from STS `AssumeRoleWithWebIdentity` with `record`'s
    /// ID token (or access token, as its provider file says), valid for more than five minutes:
    /// the ones kept with the account from an earlier call while they are, else new ones, kept
    /// (per role, session name and endpoint, at most `AWSRoleCredential.keptPerAccount`).
    ///
    /// `record` is the account `selector` chose, made valid and released by the caller first
    /// even when credentials are kept, so an account signed out or refused never answers from
    /// them. The STS call is made under the vault's lock, so callers at the same moment ask STS once.
    public func awsCredential(
        of record: AccountRecord, asked selector: AccountSelector, _ options: AWSRoleOptions, environment: [String: String]
    ) async throws -> AWSRoleCredential {
        let settings = try catalog.provider(named: record.provider).aws
        let (roleARN, endpoint) = try options.checked(settings: settings, provider: record.provider, environment: environment)
        let request = AWSRoleRequest(
            roleARN: roleARN, sessionName: options.sessionName ?? AWSNames.sessionName(from: record.label), duration: options.duration,
            endpoint: endpoint)
        let credential: AWSRoleCredential
        if let kept = record.awsCredentials?.first(where: request.matches), kept.isUsable(at: engine.now()) {
            if now(minus: kept.lastUse) >= NarrowedToken.useGranularity { await recordUse(of: request, by: record.identity) }
            credential = kept
        } else {
            let token = settings.webIdentityToken == .idToken ? record.idToken : record.accessToken
            guard let token else {
                throw AWSCredentialError.noWebIdentityToken(account: record.label, provider: record.provider, settings.webIdentityToken)
            }
            credential = try await keystore.updateAccount(record.identity) { stored in
                guard let current = stored else { throw signedOutMeanwhile(record) }
                if let kept = current.awsCredentials?.first(where: request.matches), kept.isUsable(at: engine.now()) { return kept }
                let response = try await engine.transport.send(request.httpRequest(token: token))
                let credential = try request.credential(from: response, now: engine.now())
                stored?.awsCredentials = AWSRoleCredential.keeping(credential, among: current.awsCredentials ?? [], now: engine.now())
                return credential
            }
        }
        keepForLauncher(credential, of: record, asked: selector, options, environment: environment)
        return credential
    }

    /// The answer `latchkey aws-credential` prints for `credential` (the AWS CLI's documented JSON).
    public static func awsProcessAnswer(_ credential: AWSRoleCredential) throws -> String {
        try ReportJSON.text(of: AWSProcessCredential(credential)) + "\n"
    }

    /// Leaves the answer for the launcher, keyed by the command line as given and the variables
    /// it read, so the AWS CLI's next call (it runs the command before every one) is answered in
    /// about a millisecond. Not when a bare provider's meaning depends on the directory
    /// (`[directories]` maps something): the launcher's key could not say which account it meant.
    private func keepForLauncher(
        _ credential: AWSRoleCredential, of record: AccountRecord, asked selector: AccountSelector, _ options: AWSRoleOptions,
        environment: [String: String]
    ) {
        guard selector.account != nil || here == nil, let text = try? Self.awsProcessAnswer(credential) else { return }
        keystore.keepAnswerForLauncher(
            Array(text.utf8),
            key: {
                TokenCopy.awsAnswerKeyDescription(
                    vaultPath: $0, selector: selector.description, options: options,
                    environment: AWSRoleOptions.environment { environment[$0] })
            }, of: record, until: credential.expiresAt.addingTimeInterval(-AWSRoleCredential.margin))
    }

    private func now(minus date: Date) -> TimeInterval { engine.now().timeIntervalSince(date) }

    /// Notes that the credentials kept for `request` answered a call now, so they are among the
    /// last to go when the account keeps too many; best effort, as for narrowed tokens.
    private func recordUse(of request: AWSRoleRequest, by account: AccountIdentity) async {
        let now = engine.now()
        _ = try? await keystore.updateAccount(account) { record in
            guard let position = record?.awsCredentials?.firstIndex(where: request.matches) else { return }
            record?.awsCredentials?[position].lastUsedAt = now
        }
    }
}
