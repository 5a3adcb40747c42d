import Foundation
import LatchkeyEssentials
import LatchkeyLauncher
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyBroker
@testable import LatchkeyBrokerWire
@testable import LatchkeyClouds
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// `latchkey aws-credential`: STS `AssumeRoleWithWebIdentity` with the account's ID token, its
/// answer read strictly, the credentials kept with the account until five minutes before they
/// expire; and `aws-config`'s profile.
@Suite("AWS credentials from the account's ID token")
struct AWSCredentialTests {
    static let role = "arn:aws:iam::123456789012:role/deploy"
    static let endpoint = "https://sts.test.example/sts"

    static func answer(accessKey: String = "ASIAEXAMPLE0001", expiration: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
          <AssumeRoleWithWebIdentityResult>
            <SubjectFromWebIdentityToken>alice</SubjectFromWebIdentityToken>
            <Credentials>
              <AccessKeyId>\(accessKey)</AccessKeyId>
              <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCY&amp;EXAMPLEKEY</SecretAccessKey>
              <SessionToken>FQoGZXIvYXdzEBYaD+session/token=</SessionToken>
              <Expiration>\(expiration)</Expiration>
            </Credentials>
            <AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/deploy/alice</Arn></AssumedRoleUser>
          </AssumeRoleWithWebIdentityResult>
          <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
        </AssumeRoleWithWebIdentityResponse>
        """
    }

    static func errorAnswer(code: String, message: String) -> String {
        """
        <ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
          <Error><Type>Sender</Type><Code>\(code)</Code><Message>\(message)</Message></Error>
          <RequestId>1</RequestId>
        </ErrorResponse>
        """
    }

    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static var request: AWSRoleRequest {
        AWSRoleRequest(roleARN: role, sessionName: "alice", duration: nil, endpoint: URL(string: endpoint)!)
    }

    static func read(_ body: String, status: Int = 200) throws(AWSCredentialError) -> AWSRoleCredential {
        try request.credential(from: HTTPResponse(status: status, body: Array(body.utf8)), now: now)
    }

    static func problem(_ body: String, status: Int = 200) -> AWSCredentialError? {
        do {
            _ = try read(body, status: status)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - STS's answer

    @Test("the four credential fields are read from STS's answer, entities decoded, Expiration as RFC 3339")
    func readsTheAnswer() throws {
        let credential = try Self.read(Self.answer(expiration: "2025-06-15T16:06:40Z"))
        #expect(credential.accessKeyID == "ASIAEXAMPLE0001")
        #expect(credential.secretAccessKey.exposedValue == "wJalrXUtnFEMI/K7MDENG/bPxRfiCY&EXAMPLEKEY")
        #expect(credential.sessionToken.exposedValue == "FQoGZXIvYXdzEBYaD+session/token=")
        #expect(credential.expiresAt == Self.now.addingTimeInterval(3600))
        #expect(credential.roleARN == Self.role && credential.sessionName == "alice" && credential.endpoint == Self.endpoint)
    }

    @Test("the printed JSON is the credential_process format, version 1, and nothing else")
    func printedJSON() throws {
        let credential = try Self.read(Self.answer(expiration: "2025-06-15T16:06:40Z"))
        let json = try JSONSerialization.jsonObject(with: Data(try ReportJSON.text(of: AWSProcessCredential(credential)).utf8))
        let object = try #require(json as? [String: Any])
        #expect(Set(object.keys) == ["Version", "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"])
        #expect(object["Version"] as? Int == 1)
        #expect(object["Expiration"] as? String == "2025-06-15T16:06:40Z")
        #expect(object["SecretAccessKey"] as? String == "wJalrXUtnFEMI/K7MDENG/bPxRfiCY&EXAMPLEKEY")
        #expect(String(describing: credential).contains("EXAMPLEKEY") == false, "secrets are redacted when printed by accident")
    }

    @Test("an STS ErrorResponse becomes one line with its Code and Message, terminal controls made inert")
    func errorResponse() throws {
        // XML 1.0 cannot carry ESC itself; the C1 CSI, a line break and a bidi override it can.
        let error = try #require(
            Self.problem(Self.errorAnswer(code: "InvalidIdentityToken", message: "Bad token&#10;&#x9B;31m red &#x202E;"), status: 400))
        #expect(error == .stsRefused(code: "InvalidIdentityToken", message: "Bad token\n\u{9B}31m red \u{202E}", status: 400))
        #expect(error.category == .rejected)
        #expect(error.description.hasPrefix("STS refused AssumeRoleWithWebIdentity: InvalidIdentityToken: Bad token"))
        #expect(!error.description.unicodeScalars.contains { ["\u{9B}", "\n", "\u{202E}"].contains($0) }, "\(error.description)")
        let throttled = try #require(Self.problem(Self.errorAnswer(code: "Throttling", message: "slow down"), status: 503))
        #expect(throttled.category == .unavailable)
    }

    @Test(
        "hostile or broken answers are refused with what is wrong, and nothing is read from them",
        arguments: [
            (
                "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;\">]><a>&lol2;</a>",
                "document type"
            ),
            ("<!DOCTYPE a [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><a>&x;</a>", "document type"),
            ("<a>&x;</a>", "entity &x;"),
            ("<a><![CDATA[x]]></a>", "CDATA"),
            ("<a><?php x?></a>", "processing instruction"),
            (String(repeating: "<a>", count: 20) + String(repeating: "</a>", count: 20), "nested deeper"),
            ("<a>" + String(repeating: "<b/>", count: 300) + "</a>", "more than 256 elements"),
            ("<a>" + String(repeating: "x", count: 70_000) + "</a>", "larger than 64 KiB"),
            ("<a><b></a></b>", "closed by another"),
            ("<a>", "never closed"),
            ("<a>&#0;</a>", "not a character"),
            ("<a>\u{07}</a>", "control character"),
            ("<a></a><b></b>", "text after the root"),
            ("{\"Credentials\":{}}", "no root element"),
        ])
    func hostileXML(body: String, expected: String) throws {
        let error = try #require(Self.problem(body))
        guard case .malformedAnswer(_, let problem) = error else { Issue.record("\(error)"); return }
        #expect(problem.contains(expected), "\(problem)")
        #expect(error.category == .rejected)
    }

    @Test(
        "an answer without one of the four fields, with two of one, or already expiring is refused",
        arguments: [
            ("<AccessKeyId>ASIAEXAMPLE0001</AccessKeyId>", "", "no AccessKeyId"),
            ("<SessionToken>FQoGZXIvYXdzEBYaD+session/token=</SessionToken>", "", "no SessionToken"),
            (
                "<SessionToken>FQoGZXIvYXdzEBYaD+session/token=</SessionToken>",
                "<SessionToken>a</SessionToken><SessionToken>b</SessionToken>", "2 <SessionToken>"
            ),
            ("<AccessKeyId>ASIAEXAMPLE0001</AccessKeyId>", "<AccessKeyId>AS IA</AccessKeyId>", "visible ASCII"),
            ("2025-06-15T16:06:40Z", "tomorrow", "RFC 3339"),
            ("2025-06-15T16:06:40Z", "2025-06-15T15:07:00Z", "within five minutes"),
        ])
    func missingFields(field: String, replacement: String, expected: String) throws {
        let body = Self.answer(expiration: "2025-06-15T16:06:40Z").replacingOccurrences(of: field, with: replacement)
        let error = try #require(Self.problem(body))
        #expect(error.description.contains(expected), "\(error)")
    }

    @Test("mutated answers never crash the reader: each is read or refused with a problem, and a read one has all four fields")
    func mutatedAnswers() {
        var generator = SplitMix(seed: 0x5757_AAAA)
        let valid = Array(Self.answer(expiration: "2025-06-15T16:06:40Z").utf8)
        let pieces = Array("<>/&;#x=\"'![]?-:".utf8) + [0, 0x80, 0xFF, 0x0A]
        for bytes in generator.mutants(of: valid, pieces: pieces, count: 1000, span: 40) {
            do {
                let credential = try Self.request.credential(from: HTTPResponse(status: 200, body: bytes), now: Self.now)
                #expect(!credential.accessKeyID.isEmpty && !credential.sessionToken.exposedValue.isEmpty)
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }

    @Test("a server error page that is not STS's XML says STS is unavailable; a 200 that is not STS's answer is refused")
    func notSTS() throws {
        #expect(Self.problem("<html><body>Bad Gateway", status: 502) == .stsUnavailable(host: "sts.test.example", status: 502))
        #expect(Self.problem("<html><body>hello</body></html>")?.description.contains("no AssumeRoleWithWebIdentityResult") == true)
    }

    // MARK: - Names

    @Test("role ARNs, session names and regions are checked as STS and IAM define them")
    func names() {
        #expect(AWSNames.roleARNProblem(Self.role) == nil)
        #expect(AWSNames.roleARNProblem("arn:aws-us-gov:iam::123456789012:role/path/to/Role+=,.@_-") == nil)
        for bad in [
            "deploy", "arn:aws:iam::1234:role/x", "arn:aws:s3::123456789012:role/x", "arn:aws:iam::123456789012:user/x",
            "arn:aws:iam::123456789012:role/", "arn:aws:iam::123456789012:role/a b", "arn:aws:iam:us-east-1:123456789012:role/x",
        ] {
            #expect(AWSNames.roleARNProblem(bad) != nil, "\(bad)")
        }
        #expect(AWSNames.sessionName(from: "alice@example.com") == "alice@example.com")
        #expect(AWSNames.sessionName(from: "Ålice Smith\u{1B}[31m") == "-lice-Smith--31m")
        #expect(AWSNames.sessionName(from: "é") == "latchkey")
        #expect(AWSNames.sessionName(from: String(repeating: "a", count: 100)).count == 64)
        #expect(
            AWSNames.sessionNameProblem("a") != nil && AWSNames.sessionNameProblem("a b") != nil && AWSNames.sessionNameProblem("ok") == nil
        )
        #expect(AWSNames.isRegion("eu-west-1") && !AWSNames.isRegion("eu-west-1.evil.com/") && !AWSNames.isRegion(""))
    }

    @Test("the endpoint: the option, then aws_sts_endpoint, then AWS_ENDPOINT_URL_STS, then the region's, then the global one")
    func endpointOrder() throws {
        let settings = AWSSettings(roleARN: Self.role, region: "eu-west-1")
        let options = AWSRoleOptions()
        #expect(
            try options.checked(settings: settings, provider: "corp", environment: [:]).endpoint.absoluteString
                == "https://sts.eu-west-1.amazonaws.com")
        #expect(
            try options.checked(settings: settings, provider: "corp", environment: ["AWS_ENDPOINT_URL_STS": "http://127.0.0.1:5000"])
                .endpoint
                .absoluteString == "http://127.0.0.1:5000")
        #expect(
            try options.checked(settings: AWSSettings(roleARN: Self.role), provider: "corp", environment: ["AWS_REGION": "us-east-2"])
                .endpoint
                .absoluteString == "https://sts.us-east-2.amazonaws.com")
        #expect(
            try options.checked(settings: AWSSettings(roleARN: Self.role), provider: "corp", environment: [:]).endpoint.absoluteString
                == "https://sts.amazonaws.com")
        #expect(throws: AWSCredentialError.self) {
            _ = try AWSRoleOptions(stsEndpoint: "http://sts.example.com").checked(
                settings: settings, provider: "corp", environment: [:])
        }
        #expect(throws: AWSCredentialError.noRole(provider: "corp")) {
            _ = try options.checked(settings: AWSSettings(), provider: "corp", environment: [:])
        }
    }

    // MARK: - Through the account

    /// The credentials for `options` of corp's account, made valid first as the broker does.
    static func credential(_ service: AccountService, _ options: AWSRoleOptions) async throws -> AWSRoleCredential {
        let selector = AccountSelector(provider: "corp")
        let record = try await service.validRecord(for: selector, minimumLifetime: 60)
        return try await service.awsCredential(of: record, asked: selector, options, environment: [:])
    }

    func signedIn(_ server: FakeAuthorizationServer, settings: AWSSettings = AWSSettings(roleARN: role)) async throws -> (
        AccountService, InMemoryKeystore
    ) {
        var provider = server.provider
        provider.aws = settings
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore, providers: [provider])
        _ = try await service.signIn(provider: provider, interaction: ScriptedPerson { _, _ in .cancel })
        return (service, keystore)
    }

    /// STS at `endpoint`: a new access key for every call, valid for an hour from the server's clock.
    func serveSTS(_ server: FakeAuthorizationServer) {
        server.transport.route("/sts") { [clock = server.clock] request in
            let number = request.form["RoleSessionName"].map { "\($0.count)" } ?? "0"
            let expiration = clock.now().addingTimeInterval(3600).formatted(.iso8601)
            let key = "ASIA" + String(Int(clock.now().timeIntervalSince1970)) + number
            return .success(HTTPResponse(status: 200, body: Array(Self.answer(accessKey: key, expiration: expiration).utf8)))
        }
    }

    @Test(
        "STS gets the account's ID token, the credentials are kept, and the next call asks STS nothing until five minutes before they expire"
    )
    func keptUntilFiveMinutesBefore() async throws {
        let server = FakeAuthorizationServer()
        serveSTS(server)
        let (service, keystore) = try await signedIn(server)
        let options = AWSRoleOptions(stsEndpoint: Self.endpoint)
        let first = try await Self.credential(service, options)
        let sent = try #require(server.transport.sent(to: "/sts").first)
        let record = try #require(try await keystore.records().first)
        #expect(sent.form["Action"] == "AssumeRoleWithWebIdentity" && sent.form["RoleArn"] == Self.role)
        #expect(sent.form["WebIdentityToken"] == record.idToken?.exposedValue)
        #expect(sent.form["RoleSessionName"] == AWSNames.sessionName(from: record.label))
        #expect(sent.header("Authorization") == nil, "unsigned")
        #expect(record.awsCredentials == [first])

        server.clock.advance(by: 3600 - 301)
        _ = try await service.refresh(AccountSelector(provider: "corp"))  // the account's own tokens are not what is timed here
        let again = try await Self.credential(service, options)
        #expect(again.accessKeyID == first.accessKeyID)
        #expect(server.transport.sent(to: "/sts").count == 1)

        server.clock.advance(by: 2)
        let renewed = try await Self.credential(service, options)
        #expect(renewed.accessKeyID != first.accessKeyID)
        #expect(server.transport.sent(to: "/sts").count == 2)
        #expect(try await keystore.records().first?.awsCredentials == [renewed])
    }

    @Test("at most 16 roles' credentials are kept per account, the least recently used going first")
    func sixteenRoles() async throws {
        let server = FakeAuthorizationServer()
        serveSTS(server)
        let (service, keystore) = try await signedIn(server)
        for number in 0..<17 {
            _ = try await Self.credential(
                service, AWSRoleOptions(roleARN: "arn:aws:iam::123456789012:role/r\(number)", stsEndpoint: Self.endpoint))
            server.clock.advance(by: 1)
        }
        let kept = try #require(try await keystore.records().first?.awsCredentials)
        #expect(kept.count == 16)
        #expect(!kept.contains { $0.roleARN.hasSuffix("/r0") } && kept.contains { $0.roleARN.hasSuffix("/r16") })
    }

    @Test("an STS error, a malformed role ARN and an unreachable STS keep nothing; the ARN is refused before STS is asked")
    func failuresKeepNothing() async throws {
        let server = FakeAuthorizationServer()
        server.transport.route("/sts") { _ in
            .success(HTTPResponse(status: 403, body: Array(Self.errorAnswer(code: "AccessDenied", message: "Not authorized").utf8)))
        }
        let (service, keystore) = try await signedIn(server)
        await #expect(throws: AWSCredentialError.stsRefused(code: "AccessDenied", message: "Not authorized", status: 403)) {
            _ = try await Self.credential(service, AWSRoleOptions(stsEndpoint: Self.endpoint))
        }
        await #expect(throws: AWSCredentialError.self) {
            _ = try await Self.credential(service, AWSRoleOptions(roleARN: "arn:aws:iam::12:role/x", stsEndpoint: Self.endpoint))
        }
        #expect(server.transport.sent(to: "/sts").count == 1)
        #expect(try await keystore.records().first?.awsCredentials == nil)
    }

    @Test("aws_web_identity_token = \"access_token\" sends the access token instead")
    func accessTokenAsIdentity() async throws {
        let server = FakeAuthorizationServer()
        serveSTS(server)
        let (service, keystore) = try await signedIn(server, settings: AWSSettings(roleARN: Self.role, webIdentityToken: .accessToken))
        _ = try await Self.credential(service, AWSRoleOptions(stsEndpoint: Self.endpoint))
        #expect(
            server.transport.sent(to: "/sts").first?.form["WebIdentityToken"]
                == (try await keystore.records().first?.accessToken.exposedValue))
    }

    @Test("older vaults, without awsCredentials, decode unchanged")
    func olderVaults() throws {
        let json =
            #"{"accounts":[{"provider":"p","issuer":"i","subject":"s","accessToken":"a","tokenType":"Bearer","scopes":[],"createdAt":1,"updatedAt":2}]}"#
        let records = try VaultContents.decode(Array(json.utf8))
        #expect(records.first?.awsCredentials == nil)
    }

    // MARK: - The provider file

    @Test("the aws_ keys are read, and a malformed one (aws_roles' each role too) is an error naming its file and line")
    func providerFileKeys() throws {
        let base = "display_name = \"T\"\nkind = \"oidc\"\nissuer = \"https://idp.example\"\nclient_id = \"c\"\n"
        let file = "/p/providers.d/t.toml"
        let good = try ProviderFileParser().parse(
            base
                + "aws_role_arn = \"\(Self.role)\"\naws_roles = [\"\(Self.role)-2\"]\naws_region = \"eu-west-1\"\naws_sts_endpoint = \"http://127.0.0.1:5000/\"\naws_web_identity_token = \"access_token\"\n",
            file: file
        ).get()
        #expect(
            good.aws
                == AWSSettings(
                    roleARN: Self.role, roles: [Self.role + "-2"], region: "eu-west-1", stsEndpoint: URL(string: "http://127.0.0.1:5000/"),
                    webIdentityToken: .accessToken))
        #expect(good.aws.listedRoles == [Self.role, Self.role + "-2"])
        guard
            case .failure(let failure) = ProviderFileParser().parse(
                base + "aws_role_arn = \"deploy\"\naws_roles = [\"\(Self.role)\", \"arn:aws:iam::1:role/x\"]\n"
                    + "aws_region = \"x/y\"\naws_sts_endpoint = \"http://sts.example\"\n", file: file)
        else { Issue.record("accepted"); return }
        #expect(failure.errors.map(\.field) == ["aws_role_arn", "aws_roles", "aws_region", "aws_sts_endpoint"])
        #expect(failure.errors.map(\.line) == [5, 6, 7, 8])
    }

    // MARK: - aws-config

    static func profile(_ name: String = "dev", command: [String]? = nil) throws -> AWSProfile {
        try AWSProfile(
            name: name, command: command ?? ["latchkey", "aws-credential", "corp:alice@example.com", "--role-arn", role],
            region: "eu-west-1", checking: AWSRoleOptions(roleARN: role), settings: AWSSettings(), provider: "corp")
    }

    @Test("the stanza quotes words for the shell splitting the AWS CLI does, and refuses line breaks")
    func stanza() throws {
        let profile = try Self.profile(command: ["/opt/my tools/latchkey", "aws-credential", "corp:it's me", "--role-arn", Self.role])
        #expect(
            profile.stanza
                == "[profile dev]\ncredential_process = '/opt/my tools/latchkey' aws-credential 'corp:it'\\''s me' --role-arn \(Self.role)\nregion = eu-west-1"
        )
        #expect(throws: AWSConfigError.self) { _ = try Self.profile(command: ["latchkey", "a\nregion = evil"]) }
        #expect(throws: AWSConfigError.self) { _ = try Self.profile("dev]\n[x") }
    }

    @Test("--write adds the profile after a backup, and refuses to replace a profile of that name")
    func writesOnce() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("config", "[default]\nregion = us-east-1\n")
        let backup = try #require(try Self.profile().add(to: file))
        #expect(try String(contentsOfFile: backup, encoding: .utf8) == "[default]\nregion = us-east-1\n")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "[default]\nregion = us-east-1\n\n" + Self.profile().stanza + "\n")
        #expect(throws: AWSConfigError.profileExists("dev", file: file)) { try Self.profile().add(to: file) }
    }
}
