import Foundation
import LatchkeyEssentials
import LatchkeyTestSupport
import Testing

@testable import LatchkeyBroker
@testable import LatchkeyBrokerWire
@testable import LatchkeyOAuth
@testable import LatchkeyVault

/// The broker's rules, each stated once as a case, and every case run against both brokers: this
/// machine's (`LocalBroker` in process) and the agent's (`AgentBroker` through a running `Agent`).
/// A rule that held on one path and not the other is the defect this table exists to catch.
@Suite("Each broker rule holds alike in process and through the agent")
struct BrokerRulesTests {
    /// What a case ends with: what was released (in the case's own words), or the refusal's
    /// kind and a phrase its message must hold.
    enum Outcome: Equatable, CustomStringConvertible {
        case released(String)
        case refused(FailureCategory, saying: String)

        var description: String {
            switch self {
            case .released(let what): return "released \(what)"
            case .refused(let category, let phrase): return "refused (\(category.rawValue)) saying “\(phrase)”"
            }
        }

        /// Whether `actual` is this outcome: the same release, or a refusal of this kind whose
        /// message holds the phrase.
        func matches(_ actual: Outcome) -> Bool {
            switch (self, actual) {
            case (.released(let expected), .released(let got)): return expected == got
            case (.refused(let category, let phrase), .refused(let got, let message)): return category == got && message.contains(phrase)
            default: return false
            }
        }
    }

    struct Rule: Sendable, CustomTestStringConvertible {
        let name: String
        let door: BrokerBench.Door
        var providerLines = ""
        /// config.toml.
        var configuration = ""
        /// The requests, made in order; the result of the last (or a summary of several).
        let steps: @Sendable (any Broker, BrokerBench) async throws -> String
        let expected: Outcome

        var testDescription: String { "\(name) (\(door.rawValue) door)" }
    }

    static let readerRole = "arn:aws:iam::123456789012:role/reader"
    static let adminRole = "arn:aws:iam::123456789012:role/admin"
    static let awsAccount = """
        forward = true
        aws_roles = ["\(readerRole)"]
        """

    /// config.toml forwarding alice's account, for a provider file that may break.
    static let forwardedByConfiguration = "[accounts.\"corp:alice@example.com\"]\nforward = true\n"

    static func refusedHash(_ token: String) -> String { DPoPKey.accessTokenHash(Secret(token)) }

    static let rules: [Rule] = [
        Rule(
            name: "a refused token that is still the account's is refreshed once; the old one refused again gets the new one",
            door: .local,
            steps: { broker, bench in
                let first = try await broker.token(TokenRequest(selector: "corp")).accessToken?.exposedValue ?? "none"
                let refreshed = try await broker.token(TokenRequest(selector: "corp", refused: refusedHash(first)))
                let again = try await broker.token(TokenRequest(selector: "corp", refused: refusedHash(first)))
                return [refreshed, again].map { $0.accessToken?.exposedValue ?? "none" }.joined(separator: ", ")
                    + "; \(bench.refreshGrants.count) refresh"
            },
            expected: .released("access-2, access-2; 1 refresh")),
        Rule(
            name: "a refused token refused again within 30 s is not refreshed again",
            door: .local,
            steps: { broker, _ in
                let refreshed = try await broker.token(TokenRequest(selector: "corp", refused: refusedHash("access-1")))
                let token = refreshed.accessToken?.exposedValue ?? "none"
                return try await broker.token(TokenRequest(selector: "corp", refused: refusedHash(token))).accessToken?.exposedValue ?? ""
            },
            expected: .refused(.unavailable, saying: "refreshed moments ago")),
        Rule(
            name: "resource goes on the refresh of an account whose provider file lists one",
            door: .local, providerLines: #"resources = ["https://api.example/"]"#,
            steps: { broker, bench in
                _ = try await broker.token(TokenRequest(selector: "corp", refused: refusedHash("access-1")))
                return bench.refreshGrants.map { $0.formValues("resource").joined(separator: " ") }.joined(separator: "; ")
            },
            expected: .released("https://api.example/")),
        Rule(
            name: "a forwarded host gets no ID token of an account whose provider file names AWS roles",
            door: .forwarded, providerLines: awsAccount,
            steps: { broker, _ in
                try await broker.token(TokenRequest(selector: "corp", tokens: .id)).idToken == nil ? "none" : "an ID token"
            },
            expected: .refused(.keystore, saying: "forward_id_token = true")),
        Rule(
            name: "nor of an account forwarded by config.toml whose provider file cannot be read",
            door: .forwarded, configuration: forwardedByConfiguration,
            steps: { broker, bench in
                try bench.breakProviderFile()
                return try await broker.token(TokenRequest(selector: "corp", tokens: .id)).idToken == nil ? "none" : "an ID token"
            },
            expected: .refused(.keystore, saying: "or cannot be read there")),
        Rule(
            name: "nor its access token: the file that would say whether it is the account's identity cannot be read",
            door: .forwarded, configuration: forwardedByConfiguration,
            steps: { broker, bench in
                try bench.breakProviderFile()
                return try await broker.token(TokenRequest(selector: "corp")).accessToken == nil ? "none" : "an access token"
            },
            expected: .refused(.keystore, saying: "or cannot be read there")),
        Rule(
            name: "nor the access token aws_web_identity_token names",
            door: .forwarded, providerLines: awsAccount + "\naws_web_identity_token = \"access_token\"",
            steps: { broker, _ in try await broker.token(TokenRequest(selector: "corp")).accessToken == nil ? "none" : "an access token" },
            expected: .refused(.keystore, saying: "gets no identity token")),
        Rule(
            name: "forward_id_token = true releases it all the same",
            door: .forwarded, providerLines: awsAccount + "\nforward_id_token = true",
            steps: { broker, _ in
                try await broker.token(TokenRequest(selector: "corp", tokens: .id)).idToken == nil ? "none" : "an ID token"
            },
            expected: .released("an ID token")),
        Rule(
            name: "a program on this machine gets the ID token of such an account",
            door: .local, providerLines: awsAccount,
            steps: { broker, _ in
                try await broker.token(TokenRequest(selector: "corp", tokens: .id)).idToken == nil ? "none" : "an ID token"
            },
            expected: .released("an ID token")),
        Rule(
            name: "a forwarded host gets AWS credentials only for a role the provider file lists",
            door: .forwarded, providerLines: awsAccount,
            steps: { broker, _ in
                let options = AWSRoleOptions(roleARN: adminRole)
                return try await broker.awsCredential(AWSCredentialRequest(selector: "corp", options: options)).accessKeyID
            },
            expected: .refused(.keystore, saying: "only for a role")),
        Rule(
            name: "a forwarded host may not choose the STS endpoint",
            door: .forwarded, providerLines: awsAccount,
            steps: { broker, _ in
                let options = AWSRoleOptions(roleARN: readerRole, stsEndpoint: "https://sts.attacker.example")
                return try await broker.awsCredential(AWSCredentialRequest(selector: "corp", options: options)).accessKeyID
            },
            expected: .refused(.keystore, saying: "may not choose the STS endpoint")),
        Rule(
            name: "a forwarded host gets nothing of an account not marked forward = true, in the words an unknown one gets",
            door: .forwarded,
            steps: { broker, _ in try await broker.token(TokenRequest(selector: "corp")).accessToken == nil ? "none" : "a token" },
            expected: .refused(.keystore, saying: "no account shared with forwarded connections")),
        Rule(
            name: "a forwarded host gets a token narrowed only to a resource the provider file lists",
            door: .forwarded, providerLines: "forward = true\n" + #"resources = ["https://api.example/"]"#,
            steps: { broker, _ in
                let narrowing = TokenNarrowing(resource: "https://elsewhere.example/", scopes: [])
                return try await broker.token(TokenRequest(selector: "corp", narrowing: narrowing)).accessToken == nil ? "none" : "a token"
            },
            expected: .refused(.keystore, saying: "only for a resource")),
        Rule(
            name: "more scope nobody accepted is refused with the command to run, and never stored",
            door: .local,
            steps: { broker, bench in
                do {
                    try await broker.moreScope(ScopeRequest(selector: "corp", scopes: ["admin:all"], askedBy: "the MCP server"))
                } catch {
                    let stored = try await bench.storedScopes()
                    #expect(!stored.contains("admin:all"), "a scope nobody accepted was stored: \(stored)")
                    throw error
                }
                return "a sign-in"
            },
            expected: .refused(.rejected, saying: "--scope admin:all")),
        Rule(
            name: "a negative min_ttl is a malformed request",
            door: .local,
            steps: { broker, _ in
                try await broker.token(TokenRequest(selector: "corp", minimumLifetime: -1)).accessToken == nil ? "none" : "a token"
            },
            expected: .refused(.usage, saying: "min_ttl must not be negative")),
        Rule(
            name: "git gets no credential for a host no provider file lists",
            door: .local, providerLines: #"git_hosts = ["git.corp.example"]"#,
            steps: { broker, _ in
                let elsewhere = try await broker.gitCredential(GitRequest(attributes: "protocol=https\nhost=git.elsewhere.example\n"))
                let listed = try await broker.gitCredential(GitRequest(attributes: "protocol=https\nhost=git.corp.example\n"))
                return "elsewhere: \(elsewhere.credential == nil ? "none" : "one"), listed: \(listed.credential == nil ? "none" : "one")"
            },
            expected: .released("elsewhere: none, listed: one")),
    ]

    @Test(arguments: rules, BrokerBench.Implementation.allCases)
    func rule(_ rule: Rule, _ implementation: BrokerBench.Implementation) async throws {
        let bench = try await BrokerBench(providerLines: rule.providerLines, configuration: rule.configuration)
        let outcome: Outcome
        do {
            outcome = .released(try await rule.steps(try await bench.broker(implementation, at: rule.door), bench))
        } catch let error as any LatchkeyError {
            outcome = .refused(error.category, saying: error.description)
        }
        await bench.close()
        #expect(rule.expected.matches(outcome), "\(implementation.rawValue): \(outcome), expected \(rule.expected)")
    }
}
