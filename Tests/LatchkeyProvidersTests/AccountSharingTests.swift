import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyProviders
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

    @Test("a policy that cannot be read is not taken for one that allows everything")
    func unreadablePolicy() throws {
        let github = try parsed(provider + "\nforward = true\n")
        let broken = ProviderFileError(file: "/p/gitlab.toml", line: 3, message: "not valid TOML")
        let catalog = ProviderCatalog(providers: [github], errors: [broken])
        let alice = AccountRecord.testing(provider: "github", subject: "1", displayName: "alice@example.com")
        let bob = AccountRecord.testing(provider: "gitlab", subject: "2", displayName: "bob@example.com")
        let nobody = AccountRecord.testing(provider: "gone", subject: "3", displayName: "carol@example.com")
        let readable = LatchkeyConfiguration()
        #expect(LatchkeyConfiguration.sharing(of: alice, configuration: readable, catalog: catalog) == (forward: true, confirm: false))
        #expect(
            LatchkeyConfiguration.sharing(of: bob, configuration: readable, catalog: catalog) == (forward: false, confirm: true),
            "its provider file does not parse")
        #expect(
            LatchkeyConfiguration.sharing(of: nobody, configuration: readable, catalog: catalog) == (forward: false, confirm: false),
            "no provider file at all: nothing set")
        for record in [alice, bob, nobody] {
            #expect(
                LatchkeyConfiguration.sharing(of: record, configuration: nil, catalog: catalog) == (forward: false, confirm: true),
                "config.toml does not parse")
        }
        var own = LatchkeyConfiguration()
        own.accounts = [
            AccountSettings(selector: AccountSelector(parsing: "gitlab:bob@example.com"), sharing: AccountSharing(confirm: false))
        ]
        #expect(
            LatchkeyConfiguration.sharing(of: bob, configuration: own, catalog: catalog) == (forward: false, confirm: false),
            "the account's own table in config.toml still says")
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
