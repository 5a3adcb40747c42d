import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyClouds
@testable import LatchkeyVault

/// Google's executable-sourced `external_account` credentials (AIP-4117): the configuration
/// `gcp-config` writes, and the answer `gcp-credential` gives the client libraries.
@Suite("Google external-account configuration and executable responses")
struct GoogleExternalAccountTests {
    static let workload = "//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/pool-1/providers/corp"
    static let workforce = "//iam.googleapis.com/locations/global/workforcePools/staff/providers/corp"

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("the configuration names the pool, an ID token subject, Google's STS and the command the libraries run, as AIP-4117 lays it out")
    func configurationFields() throws {
        let text = try GoogleExternalAccount.configuration(
            audience: Self.workload, command: ["/usr/bin/latchkey", "gcp-credential", "corp"], tokenURL: nil, impersonationURL: nil)
        let configuration = try Self.object(text)
        #expect(configuration["type"] as? String == "external_account")
        #expect(configuration["audience"] as? String == Self.workload)
        #expect(configuration["subject_token_type"] as? String == "urn:ietf:params:oauth:token-type:id_token")
        #expect(configuration["token_url"] as? String == "https://sts.googleapis.com/v1/token")
        #expect(configuration["service_account_impersonation_url"] == nil)
        let source = try #require(configuration["credential_source"] as? [String: Any])
        let executable = try #require(source["executable"] as? [String: Any])
        #expect(executable["command"] as? String == "/usr/bin/latchkey gcp-credential corp")
        #expect(executable["timeout_millis"] as? Int == 30_000, "Google allows 5 to 120 s; a refresh fits, a sign-in does not")
        #expect(Set(configuration.keys) == ["type", "audience", "subject_token_type", "token_url", "credential_source"])
    }

    @Test("a workforce pool and a service account to impersonate are written as given")
    func workforceAndImpersonation() throws {
        let impersonation =
            "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/ci@p.iam.gserviceaccount.com:generateAccessToken"
        let configuration = try Self.object(
            try GoogleExternalAccount.configuration(
                audience: Self.workforce, command: ["/bin/latchkey", "gcp-credential"], tokenURL: "https://sts.example.com/v1/token",
                impersonationURL: impersonation))
        #expect(configuration["service_account_impersonation_url"] as? String == impersonation)
        #expect(configuration["token_url"] as? String == "https://sts.example.com/v1/token")
    }

    @Test(
        "an audience that is not a pool provider's full name is refused before anything is written",
        arguments: [
            "projects/123456/locations/global/workloadIdentityPools/pool-1/providers/corp",
            "//iam.googleapis.com/projects/abc/locations/global/workloadIdentityPools/pool-1/providers/corp",
            workload + "/extra", workload + "\n", "//iam.googleapis.com/locations/global/workforcePools/Staff/providers/corp", "",
        ])
    func audienceRefused(_ audience: String) {
        #expect(throws: GoogleCredentialError.self) {
            try GoogleExternalAccount.configuration(audience: audience, command: ["/bin/latchkey"], tokenURL: nil, impersonationURL: nil)
        }
    }

    @Test("a command word the libraries would split, or an empty one, is refused")
    func unsplittableCommand() {
        for word in ["/opt/my tools/latchkey", "", "gcp\tcredential", "a\nb"] {
            #expect(throws: GoogleCredentialError.unsplittableCommand(word)) {
                try GoogleExternalAccount.configuration(
                    audience: Self.workload, command: ["/bin/latchkey", word], tokenURL: nil, impersonationURL: nil)
            }
        }
    }

    @Test("a token URL that is plain http to another host, relative or with a fragment is refused, naming the option")
    func tokenURLRefused() {
        for url in ["http://sts.example.com/v1/token", "sts.googleapis.com/v1/token", "https://sts.googleapis.com/v1/token#x"] {
            do {
                _ = try GoogleExternalAccount.configuration(
                    audience: Self.workload, command: ["/bin/latchkey"], tokenURL: url, impersonationURL: nil)
                Issue.record("\(url) was accepted")
            } catch {
                guard case .invalidURL(_, let option, _) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(option == "--token-url")
            }
        }
    }

    @Test("a success carries the ID token, its type and its exp as expiration_time, version 1")
    func successResponse() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = TestIssuer().idToken(subject: "alice", audience: "client-corp", nonce: nil, now: now, lifetime: 600)
        let response = try GoogleExecutableResponse(idToken: token)
        let object = try Self.object(String(decoding: try JSONEncoder().encode(response), as: UTF8.self))
        #expect(object["version"] as? Int == 1)
        #expect(object["success"] as? Bool == true)
        #expect(object["token_type"] as? String == "urn:ietf:params:oauth:token-type:id_token")
        #expect(object["id_token"] as? String == token.exposedValue)
        #expect(object["expiration_time"] as? Int == 1_800_000_600)
        #expect(object["code"] == nil && object["message"] == nil)
    }

    @Test("an ID token without exp, or not a JWT at all, gives no success: the libraries could not tell when to ask again")
    func noExpiry() {
        let header = TestIssuer.base64URL(Array(#"{"alg":"RS256"}"#.utf8))
        let claims = TestIssuer.base64URL(Array(#"{"sub":"alice","iss":"https://corp.example"}"#.utf8))
        for token in ["\(header).\(claims).c2ln", "not-a-jwt", "\(header).!!!.c2ln"] {
            #expect(throws: GoogleCredentialError.noExpiry) { try GoogleExecutableResponse(idToken: Secret(token)) }
        }
    }

    @Test("a failure's message is made inert: a provider's words cannot drive the terminal that shows the libraries' exception")
    func failureIsInert() throws {
        let response = GoogleExecutableResponse(failure: "401", message: "refresh failed: \u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J")
        let object = try Self.object(String(decoding: try JSONEncoder().encode(response), as: UTF8.self))
        #expect(object["success"] as? Bool == false && object["code"] as? String == "401")
        let message = try #require(object["message"] as? String)
        #expect(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(message.debugDescription)")
        #expect(object["id_token"] == nil && object["expiration_time"] == nil)
    }

    @Test("the configuration file is created owner-only and never replaces a file or follows a link there")
    func createdOwnerOnly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/gcp.json"
        try GoogleExternalAccount.create(file, text: "{}\n")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(throws: GoogleCredentialError.exists(file: file)) { try GoogleExternalAccount.create(file, text: "{}\n") }
        let target = try directory.write("elsewhere", "keep")
        let link = directory.path + "/link.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(throws: GoogleCredentialError.self) { try GoogleExternalAccount.create(link, text: "{}\n") }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
    }

    @Test("the libraries' output file is replaced whole, owner-only")
    func outputFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("output.json", "old answer", mode: 0o644)
        try GoogleExternalAccount.writeOutputFile(file, GoogleExecutableResponse(failure: "1", message: "no account"))
        let object = try Self.object(try String(contentsOfFile: file, encoding: .utf8))
        #expect(object["success"] as? Bool == false)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }
}
