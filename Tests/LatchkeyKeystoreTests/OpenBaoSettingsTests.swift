import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyProviders
@testable import LatchkeyVault

/// config.toml's `[openbao]`: every field checked with its line, one way to log in, and the token
/// read from a file checked as every secret file is.
@Suite("config.toml's [openbao] table")
struct OpenBaoSettingsTests {
    static func settings(_ text: String) throws(ProviderFileErrors) -> OpenBaoSettings? {
        try LatchkeyConfiguration.checked(text, path: "/etc/latchkey/config.toml", environment: [:]).openBao
    }

    /// The errors `text` gives, as `field: message (line)`.
    static func errors(_ text: String) -> [String] {
        do {
            _ = try settings(text)
            return []
        } catch {
            return error.errors.map { "\($0.field ?? "-"): \($0.message) (\($0.line.map(String.init) ?? "-"))" }
        }
    }

    @Test("a full table: the addresses in order, mount, path and token_file")
    func fullTable() throws {
        let settings = try #require(
            try Self.settings(
                """
                keystore = "vault"

                [openbao]
                addresses = ["https://bao-1.example:8200", "https://bao-2.example:8200", "http://127.0.0.1:8200"]
                mount = "team-kv"
                path = "latchkey/ops"
                token_file = "/home/alice/.config/latchkey/openbao-token"
                """))
        #expect(
            settings.addresses.map(\.absoluteString) == [
                "https://bao-1.example:8200", "https://bao-2.example:8200", "http://127.0.0.1:8200",
            ])
        #expect(settings.mount == "team-kv" && settings.path == "latchkey/ops")
        #expect(settings.login == .tokenFile("/home/alice/.config/latchkey/openbao-token"))
    }

    @Test("mount defaults to secret; with no token_file and no AppRole the token comes from the environment")
    func defaults() throws {
        let settings = try #require(try Self.settings("[openbao]\naddresses = [\"https://bao.example\"]\npath = \"team\"\n"))
        #expect(settings.mount == "secret" && settings.login == .environment)
        #expect(try Self.settings("keystore = \"vault\"\n") == nil, "no table, no settings")
    }

    @Test("AppRole: the role ID and the file holding the secret ID")
    func appRole() throws {
        let settings = try #require(
            try Self.settings(
                """
                [openbao]
                addresses = ["https://bao.example"]
                path = "ci"
                approle_role_id = "db02de05-fa39-4855-059b-67221c5c2f63"
                approle_secret_id_file = "/run/secrets/openbao-secret-id"
                """))
        #expect(settings.login == .appRole(roleID: "db02de05-fa39-4855-059b-67221c5c2f63", secretIDFile: "/run/secrets/openbao-secret-id"))
    }

    @Test(
        "each broken field is named with its line and what is wrong",
        arguments: [
            ("path = \"team\"\n", "openbao.addresses: missing (required) (1)"),
            ("addresses = [\"https://bao.example\"]\n", "openbao.path: missing (required) (1)"),
            ("addresses = []\npath = \"team\"\n", "openbao.addresses: must be an array of addresses"),
            ("addresses = \"https://bao.example\"\npath = \"team\"\n", "openbao.addresses: must be an array of addresses"),
            ("addresses = [\"https://bao.example\", 8200]\npath = \"team\"\n", "openbao.addresses: must be an array of addresses"),
            (
                "addresses = [\"http://bao.example:8200\"]\npath = \"team\"\n",
                "must use https (plain http is allowed only for loopback hosts"
            ),
            ("addresses = [\"https://bao.example/?ns=x\"]\npath = \"team\"\n", "must not contain a ?query (2)"),
            ("addresses = [\"https://bao.example\"]\npath = \"team/../sys\"\n", "openbao.path: path \"team/../sys\" must be a secret path"),
            ("addresses = [\"https://bao.example\"]\npath = \"team//x\"\n", "openbao.path: path \"team//x\" must be a secret path"),
            (
                "addresses = [\"https://bao.example\"]\npath = \"team\"\nmount = \"/kv\"\n",
                "openbao.mount: mount \"/kv\" must be a mount path"
            ),
            (
                "addresses = [\"https://bao.example\"]\npath = \"team\"\ntoken_file = \"token\"\n",
                "openbao.token_file: must be an absolute path (4)"
            ),
            ("addresses = [\"https://bao.example\"]\npath = \"team\"\ntoken = \"s.x\"\n", "openbao.token: unknown key"),
            (
                "addresses = [\"https://bao.example\"]\npath = \"team\"\ntoken_file = \"/t\"\napprole_role_id = \"r\"\napprole_secret_id_file = \"/s\"\n",
                "openbao.token_file: cannot be used with approle_role_id"
            ),
            (
                "addresses = [\"https://bao.example\"]\npath = \"team\"\napprole_role_id = \"r\"\n",
                "openbao.approle_role_id: and approle_secret_id_file go together"
            ),
            (
                "addresses = [\"https://bao.example\"]\npath = \"team\"\napprole_secret_id_file = \"/s\"\n",
                "openbao.approle_role_id: and approle_secret_id_file go together"
            ),
            (
                "addresses = [\"https://bao.example\"]\npath = \"team\"\napprole_role_id = \"a b\"\napprole_secret_id_file = \"/s\"\n",
                "openbao.approle_role_id: must be visible ASCII"
            ),
            ("addresses = [\"https://bao.example\"]\npath = \"\"\n", "openbao.path: must be a non-empty string on one line"),
        ])
    func brokenFields(body: String, expected: String) {
        let errors = Self.errors("[openbao]\n" + body)
        #expect(errors.contains { $0.contains(expected) }, "\(errors)")
    }

    @Test("[openbao] that is not a table is an error naming it")
    func notATable() {
        #expect(
            Self.errors("openbao = \"https://bao.example\"\n") == ["openbao: must be a table: [openbao] with addresses, mount and path (1)"]
        )
    }

    // MARK: - The token

    static let client = OpenBaoClient(addresses: [URL(string: "https://bao.example")!], transport: RecordingTransport())

    static func settings(login: OpenBaoSettings.Login) -> OpenBaoSettings {
        OpenBaoSettings(addresses: [URL(string: "https://bao.example")!], path: "team", login: login)
    }

    @Test("token_file gives its token; the file is checked as every secret file is, and must hold a token")
    func tokenFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let good = try directory.write("token", "s.CwZ8b3o1mq2YtN0\n")
        #expect(
            try await Self.settings(login: .tokenFile(good)).token(environment: ["BAO_TOKEN": "s.other"], client: Self.client).exposedValue
                == "s.CwZ8b3o1mq2YtN0")

        let loose = try directory.write("loose", "s.CwZ8b3o1mq2YtN0\n", mode: 0o644)
        await #expect(
            throws: OpenBaoError.unusableFile(
                path: loose, key: "token_file", reason: "it is readable by other users; run `chmod 600 \(loose)`")
        ) { try await Self.settings(login: .tokenFile(loose)).token(environment: [:], client: Self.client) }

        let spaced = try directory.write("spaced", "s.Cw Z8\n")
        await #expect(throws: OpenBaoError.self) {
            try await Self.settings(login: .tokenFile(spaced)).token(environment: [:], client: Self.client)
        }
        let missing = directory.path + "/missing"
        do {
            _ = try await Self.settings(login: .tokenFile(missing)).token(environment: [:], client: Self.client)
            Issue.record("a token from no file")
        } catch {
            #expect(error.category == .configuration && error.description.hasPrefix("[openbao] token_file \(missing) cannot be used: "))
        }
    }

    @Test("without token_file or AppRole: BAO_TOKEN, else VAULT_TOKEN, else an error saying every way")
    func environmentToken() async throws {
        let settings = Self.settings(login: .environment)
        #expect(
            try await settings.token(environment: ["BAO_TOKEN": "s.bao", "VAULT_TOKEN": "s.vault"], client: Self.client).exposedValue
                == "s.bao")
        #expect(
            try await settings.token(environment: ["BAO_TOKEN": "", "VAULT_TOKEN": "s.vault"], client: Self.client).exposedValue
                == "s.vault")
        await #expect(throws: OpenBaoError.noCredential) { try await settings.token(environment: [:], client: Self.client) }
        await #expect(throws: OpenBaoError.unusableToken(variable: "BAO_TOKEN")) {
            try await settings.token(environment: ["BAO_TOKEN": "s.x\r\nX-Other: 1"], client: Self.client)
        }
        #expect(OpenBaoError.noCredential.description.contains("token_file") && OpenBaoError.noCredential.description.contains("BAO_TOKEN"))
    }

    @Test("AppRole logs in at auth/approle/login with the role ID and the secret ID read from its file")
    func appRoleLogin() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("secret-id", "841771dc-11c9-bbc7-bcac-6a3945a69cd9\n")
        let transport = RecordingTransport()
        transport.route("/v1/auth/approle/login", status: 200, json: OpenBaoClientTests.loginAnswer(token: "s.runner"))
        let client = OpenBaoClient(addresses: [URL(string: "https://bao.example")!], transport: transport)
        let token = try await Self.settings(login: .appRole(roleID: "db02de05", secretIDFile: file)).token(environment: [:], client: client)
        #expect(token.exposedValue == "s.runner")
        #expect(transport.body(0) as? [String: String] == ["role_id": "db02de05", "secret_id": "841771dc-11c9-bbc7-bcac-6a3945a69cd9"])

        let loose = try directory.write("loose", "841771dc\n", mode: 0o640)
        await #expect(throws: OpenBaoError.self) {
            try await Self.settings(login: .appRole(roleID: "db02de05", secretIDFile: loose)).token(environment: [:], client: client)
        }
        #expect(transport.sent.count == 1, "a loose secret ID file is refused before OpenBao is asked")
    }
}
