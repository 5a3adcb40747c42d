import Foundation
import Testing

@testable import LatchkeyCore
@testable import LatchkeyVault

@Suite("forward and confirm: per account in config.toml, per provider in its file")
struct AccountSharingTests {
    let provider = """
        display_name = "GitHub"
        kind = "oauth2"
        authorization_endpoint = "https://github.com/login/oauth/authorize"
        token_endpoint = "https://github.com/login/oauth/access_token"
        client_id = "x"
        """

    func parsed(_ text: String) throws -> Provider {
        try ProviderFileParser().parse(text, file: "/p/github.toml").get()
    }

    @Test("a provider file's forward and confirm apply to its accounts unless the account's own table says otherwise")
    func precedence() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let github = try parsed(provider + "\nforward = true\nconfirm = true\n")
        #expect(github.sharing == AccountSharing(forward: true, confirm: true))
        let config = try directory.write(
            "config.toml",
            """
            [accounts."github:alice@example.com"]
            confirm = false

            [accounts."github:ci-bot"]
            forward = false
            """)
        let settings = try LatchkeyConfiguration.load(path: config)
        let alice = AccountRecord.testing(provider: "github", subject: "1", displayName: "alice@example.com")
        let bot = AccountRecord.testing(provider: "github", subject: "ci-bot", displayName: "CI")
        let carol = AccountRecord.testing(provider: "github", subject: "3", displayName: "carol@example.com")
        #expect(settings.sharing(of: alice, provider: github) == (forward: true, confirm: false))
        #expect(settings.sharing(of: bot, provider: github) == (forward: false, confirm: true), "matched by subject")
        #expect(settings.sharing(of: carol, provider: github) == (forward: true, confirm: true))
        #expect(LatchkeyConfiguration().sharing(of: carol, provider: nil) == (forward: false, confirm: false), "neither is the default")
    }

    @Test("firebase provider files take forward and confirm too")
    func firebase() throws {
        let text = """
            display_name = "Demo"
            kind = "firebase"
            api_key = "k"
            project_id = "demo"
            forward = true
            """
        #expect(try parsed(text).sharing == AccountSharing(forward: true))
    }

    @Test("values that are not booleans, whole-provider tables and unknown keys are errors with their line")
    func errors() throws {
        #expect(throws: ProviderFileErrors.self) { try parsed(provider + "\nforward = \"yes\"\n") }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let config = try directory.write(
            "config.toml",
            """
            [accounts.github]
            forward = true

            [accounts."github:alice"]
            forwrd = true
            confirm = 1

            [agent]
            confirm_timeout = 0
            """)
        do {
            _ = try LatchkeyConfiguration.load(path: config)
            Issue.record("a broken config.toml was accepted")
        } catch {
            let text = error.errors.map(\.description).joined(separator: "\n")
            #expect(text.contains("config.toml:1: accounts: \"github\" must name one account as PROVIDER:ACCOUNT"))
            #expect(text.contains("config.toml:4: accounts.\"github:alice\".forwrd: unknown key"))
            #expect(text.contains("config.toml:4: accounts.\"github:alice\".confirm: must be true or false"))
            #expect(text.contains("config.toml:9: agent.confirm_timeout: must be a whole number of seconds from 1 to 3600"))
        }
    }
}
