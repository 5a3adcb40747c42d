import LatchkeyEssentials
import LatchkeyLauncher
import LatchkeyVault
import Testing

@Suite("The launcher reads its command line once, selector included")
struct LauncherRequestTests {
    func request(_ arguments: String...) -> LauncherRequest? {
        LauncherRequest(["latchkey"] + arguments)
    }

    @Test("token SELECTOR with or without --min-ttl, and status --json, are the launcher's to answer")
    func shapes() {
        #expect(request("token", "google") == .token(AccountSelector(provider: "google"), minimumLifetime: 60))
        #expect(
            request("token", "google:alice@example.com", "--min-ttl", "0")
                == .token(AccountSelector(provider: "google", account: "alice@example.com"), minimumLifetime: 0))
        #expect(request("token", "a:b:c", "--min-ttl=600") == .token(AccountSelector(provider: "a", account: "b:c"), minimumLifetime: 600))
        #expect(request("status", "--json") == .statusJSON)
    }

    @Test("the selector is AccountSelector's own reading, so `p:` is looked up as `p`, as the full command reads it")
    func oneSpelling() throws {
        guard case .token(let selector, _, _) = try #require(request("token", "p:")) else {
            Issue.record("not a token request")
            return
        }
        #expect(selector == AccountSelector(parsing: "p:"))
        #expect(selector.description == "p")
    }

    @Test("anything the full command would refuse or read otherwise is left to it")
    func leftToTheFullCommand() {
        for arguments in [
            ["token"], ["token", ""], ["token", "--id-token", "p"], ["token", "p", "--id-token"], ["token", "p", "--min-ttl"],
            ["token", "p", "--min-ttl", "-1"], ["token", "p", "--min-ttl", "99999999999999999999999"], ["token", "p", "--min-ttl=x"],
            ["status"], ["status", "--json", "--keystore", "vault"], ["exec", "p", "--", "true"], [],
            ["mcp", "headers"], ["mcp", "headers", "-p"], ["mcp", "headers", "p", "--min-ttl", "5"], ["mcp", "proxy", "p"],
            ["mcp", "headers", ""],
        ] {
            #expect(LauncherRequest(["latchkey"] + arguments) == nil, "\(arguments)")
        }
    }

    @Test("aws-credential SELECTOR with its options as given, --duration as the number the full command reads, --min-ttl for the agent")
    func awsCredential() {
        let role = "arn:aws:iam::123456789012:role/deploy"
        #expect(
            LauncherRequest(["latchkey", "aws-credential", "a", "--role-arn", role, "--duration=0900", "--min-ttl", "5"])
                == .awsCredential(AccountSelector(parsing: "a"), options: AWSRoleOptions(roleARN: role, duration: 900), minimumLifetime: 5))
        #expect(
            LauncherRequest(["latchkey", "aws-credential", "a:bob", "--sts-endpoint", "http://127.0.0.1:1", "--session-name", "s"])
                == .awsCredential(
                    AccountSelector(parsing: "a:bob"), options: AWSRoleOptions(sessionName: "s", stsEndpoint: "http://127.0.0.1:1"),
                    minimumLifetime: 60))
        for arguments in [
            ["aws-credential"], ["aws-credential", "--role-arn", role, "a"], ["aws-credential", "a", "--duration", "x"],
            ["aws-credential", "a", "--role-arn", role, "--role-arn", role], ["aws-credential", "a", "--region", "eu-west-1"],
            ["aws-credential", "a", "--min-ttl", "-1"], ["aws-credential", "a", "--role-arn"],
        ] {
            #expect(LauncherRequest(["latchkey"] + arguments) == nil, "\(arguments)")
        }
    }

    @Test("mcp headers SELECTOR, and only that shape, is the launcher's to answer")
    func mcpHeaders() {
        #expect(LauncherRequest(["latchkey", "mcp", "headers", "tools:alice"]) == .mcpHeaders(AccountSelector(parsing: "tools:alice")))
    }

    @Test("--resource and --scope are read as the full command reads them: scopes split at spaces, sorted, without repeats")
    func narrowing() {
        #expect(
            request("token", "p", "--resource", "https://api.example/", "--scope=write read  read", "--min-ttl", "5")
                == .token(
                    AccountSelector(provider: "p"), minimumLifetime: 5,
                    narrowing: TokenNarrowing(resource: "https://api.example/", scopes: ["read", "write"])))
        #expect(
            request("token", "p", "--scope", "b a")
                == .token(
                    AccountSelector(provider: "p"), minimumLifetime: 60, narrowing: TokenNarrowing(resource: nil, scopes: ["a", "b"])))
        for arguments in [
            ["token", "p", "--scope", " "], ["token", "p", "--resource"], ["token", "p", "--resource", "a", "--resource", "b"],
            ["token", "p", "--min-ttl", "1", "--min-ttl=2"], ["token", "p", "--scopes", "a"],
        ] {
            #expect(LauncherRequest(["latchkey"] + arguments) == nil, "\(arguments)")
        }
    }

    @Test("the largest --min-ttl an Int holds is read, not trapped on")
    func largestMinimumLifetime() {
        #expect(request("token", "p", "--min-ttl", String(Int.max)) == .token(AccountSelector(provider: "p"), minimumLifetime: .max))
    }
}
