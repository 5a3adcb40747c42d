import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("Provider files (latchkey-providers(5))")
struct ProviderFileParserTests {
    let file = "/home/alice/.config/latchkey/providers.d/test.toml"

    func parse(_ text: String, file: String? = nil) -> Result<Provider, ProviderFileErrors> {
        ProviderFileParser().parse(text, file: file ?? self.file)
    }

    func errors(_ text: String, file: String? = nil) -> [ProviderFileError] {
        switch parse(text, file: file) {
        case .success: return []
        case .failure(let failure): return failure.errors
        }
    }

    /// The OAuth view of an `oidc` or `oauth2` file.
    func provider(_ text: String) throws -> OAuthProvider {
        try parse(text).get().asOAuth
    }

    // MARK: - Valid files

    @Test("a file that sets every key parses into every field")
    func fullFile() throws {
        let path = try fixtures.url("providers/example-idp.toml").path
        let provider = try ProviderFileParser().parse(try fixtures.text("providers/example-idp.toml"), file: path).get().asOAuth
        #expect(provider.name == "example-idp")
        #expect(provider.displayName == "Example IdP")
        #expect(provider.isOpenID)
        #expect(provider.issuer == "https://idp.example.com/realms/main")
        let base = "https://idp.example.com/realms/main/protocol/openid-connect"
        #expect(provider.endpoints.authorization?.absoluteString == base + "/auth")
        #expect(provider.endpoints.token?.absoluteString == base + "/token")
        #expect(provider.endpoints.revocation?.absoluteString == base + "/revoke")
        #expect(provider.endpoints.deviceAuthorization?.absoluteString == base + "/auth/device")
        #expect(provider.endpoints.userinfo?.absoluteString == base + "/userinfo")
        #expect(provider.endpoints.jwks?.absoluteString == base + "/certs")
        #expect(provider.clientID == "latchkey-test-client")
        #expect(provider.clientSecret?.exposedValue == "fake-not-a-secret")
        #expect(provider.scopes == ["openid", "email", "profile", "offline_access"])
        #expect(provider.extraAuthorizationParameters == ["prompt": "select_account", "login_hint": "alice@example.com"])
        #expect(provider.redirectMode == .paste)
        #expect(provider.loopbackHost == .ipv6)
        #expect(provider.redirectPath == "/callback/example")
        #expect(provider.accountFields.id == "preferred_username")
        #expect(provider.accountFields.name == "name")
        #expect(provider.sourceFile == path)
        #expect(provider.redirectURI(port: 50123) == "http://[::1]:50123/callback/example")
    }

    @Test("an oidc file with only the required keys gets the documented defaults")
    func oidcDefaults() throws {
        let provider = try provider(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            """)
        #expect(provider.name == "test")
        #expect(provider.redirectPath == "/oauth2redirect/test")
        #expect(provider.loopbackHost == .ipv4)
        #expect(provider.redirectMode == .loopback)
        #expect(provider.scopes == ["openid"])
        #expect(provider.extraAuthorizationParameters.isEmpty)
        #expect(provider.clientSecret == nil)
        #expect(provider.accountFields.id == "sub")
        #expect(provider.accountFields.name == "email")
        #expect(provider.redirectURI(port: 4711) == "http://127.0.0.1:4711/oauth2redirect/test")
        #expect(provider.redirectURITemplate == "http://127.0.0.1:PORT/oauth2redirect/test")
    }

    @Test("openid is added in front of the scopes of an oidc provider that forgot it")
    func openidAdded() throws {
        let provider = try provider(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            scopes = ["email", "profile"]
            """)
        #expect(provider.scopes == ["openid", "email", "profile"])
    }

    @Test("an oauth2 provider gets no openid scope added")
    func oauth2KeepsScopes() throws {
        let provider = try provider(
            """
            display_name = "Test"
            kind = "oauth2"
            authorization_endpoint = "https://git.example.com/login/oauth/authorize"
            token_endpoint = "https://git.example.com/login/oauth/access_token"
            scopes = ["read:user"]
            """)
        #expect(!provider.isOpenID)
        #expect(provider.issuer == nil)
        #expect(provider.scopes == ["read:user"])
    }

    @Test(
        "plain http is accepted for loopback hosts",
        arguments: ["http://127.0.0.1:9000/o", "http://localhost:8080", "http://[::1]:8080/realm"])
    func loopbackHTTPAccepted(issuer: String) throws {
        let provider = try provider(
            """
            display_name = "Local"
            kind = "oidc"
            issuer = "\(issuer)"
            """)
        #expect(provider.issuer == issuer)
    }

    // MARK: - Errors

    @Test("an unknown key is an error naming the file, its line and the key")
    func unknownKey() {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            scope = ["openid", "email"]
            """)
        #expect(
            found == [
                ProviderFileError(file: file, line: 4, field: "scope", message: "unknown key (known keys: see latchkey-providers(5))")
            ])
    }

    @Test("scopes given as a string is a type error on its line")
    func wrongType() throws {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"

            issuer = "https://idp.example.com"
            scopes = "openid email"
            """)
        let error = try #require(found.first)
        #expect(found.count == 1)
        #expect(error.file == file)
        #expect(error.line == 5)
        #expect(error.field == "scopes")
        #expect(error.message.contains("must be an array of strings"))
    }

    @Test("an endpoint that is not an absolute URL is rejected on its line")
    func badURL() throws {
        let found = errors(
            """
            display_name = "Test"
            kind = "oauth2"
            issuer = "https://git.example.com"
            token_endpoint = "git.example.com/token"
            """)
        let error = try #require(found.first)
        #expect(found.count == 1)
        #expect(error.line == 4)
        #expect(error.field == "token_endpoint")
        #expect(error.message == "not an absolute http(s) URL")
    }

    @Test(
        "plain http to a host that is not loopback is rejected",
        arguments: ["http://idp.example.com", "http://127.0.0.1.evil.example", "http://localhost.evil.example", "http://10.0.0.1"])
    func insecureIssuer(issuer: String) throws {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "\(issuer)"
            """)
        let error = try #require(found.first { $0.field == "issuer" })
        #expect(error.line == 3)
        #expect(error.message.contains("must use https"))
    }

    @Test("an endpoint with a #fragment is rejected")
    func fragment() {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com#top"
            """)
        #expect(found.map(\.field) == ["issuer"])
    }

    @Test("missing display_name and kind are both reported, in one run")
    func missingRequired() {
        let found = errors(
            """
            issuer = "https://idp.example.com"
            """)
        #expect(Set(found.compactMap(\.field)) == ["display_name", "kind"])
        #expect(found.allSatisfy { $0.message == "missing (required)" && $0.line == nil })
    }

    @Test("an unknown kind lists the supported ones")
    func unknownKind() throws {
        let error = try #require(
            errors(
                """
                display_name = "Test"
                kind = "saml"
                issuer = "https://idp.example.com"
                """
            ).first)
        #expect(error.field == "kind")
        #expect(error.message.contains("\"oidc\"") && error.message.contains("\"oauth2\""))
    }

    @Test(
        "an extra authorization parameter Latchkey sets itself, or one that replaces the whole request, is rejected (one list with endpoint URLs)",
        arguments: ["state", "nonce", "code_challenge_method", "redirect_uri", "request", "request_uri", "code_verifier"])
    func reservedExtraParameter(name: String) throws {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            extra_authorization_params = { prompt = "consent", \(name) = "fixed" }
            """)
        let error = try #require(found.first)
        #expect(found.count == 1)
        #expect(error.field == "extra_authorization_params.\(name)")
        #expect(error.line == 4)
    }

    @Test("every parameter Latchkey sends itself, in the authorization request or with a client assertion, is reserved")
    func everySentParameterReserved() throws {
        var choices = ProtocolChoices()
        choices.resources = ["https://api.example.com"]
        let provider = Provider.testing(choices: choices).asOAuth
        let metadata = ServerMetadata(
            issuer: provider.issuer, authorizationEndpoint: try #require(URL(string: "https://idp.example.com/authorize")),
            tokenEndpoint: try #require(URL(string: "https://idp.example.com/token")))
        let pending = PendingAuthorization(
            provider: provider, metadata: metadata, redirectURI: "http://127.0.0.1/cb", loginHint: "ada", dpopKey: DPoPKey(),
            stepUp: StepUp(acrValues: ["mfa"], maxAge: 60))
        let assertion = try ClientAssertion(pem: Secret(P256.Signing.PrivateKey().pemRepresentation), keyID: nil)
        let sent =
            pending.parameters.map(\.0) + assertion.form(clientID: "client-example", audience: metadata.tokenEndpoint, at: Date()).map(\.0)
        #expect(Set(sent).isSuperset(of: ["dpop_jkt", "resource", "acr_values", "max_age", "client_assertion"]))
        for name in Set(sent).subtracting(["login_hint"]) {
            #expect(ProviderFileParser.reservedParameters.contains(name), "\(name) is sent by Latchkey but a provider file may set it too")
        }
    }

    @Test("an extra authorization parameter that is not a string is rejected")
    func nonStringExtraParameter() {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            extra_authorization_params = { max_age = 0 }
            """)
        #expect(found.map(\.field) == ["extra_authorization_params.max_age"])
    }

    @Test(
        "an endpoint URL whose query sets a parameter Latchkey sends itself is rejected",
        arguments: [
            ("authorization_endpoint", "state"), ("authorization_endpoint", "redirect_uri"), ("authorization_endpoint", "client_id"),
            ("token_endpoint", "code_verifier"), ("token_endpoint", "grant_type"), ("revocation_endpoint", "token"),
            ("device_authorization_endpoint", "scope"),
        ])
    func reservedParameterInEndpoint(key: String, parameter: String) {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            \(key) = "https://idp.example.com/endpoint?p=B2C_1&\(parameter)=attacker"
            """)
        #expect(found.map(\.field) == [key])
        #expect(found.first?.message.contains(parameter) == true)
        #expect(found.first?.line == 4)
    }

    @Test("an endpoint query with ordinary parameters is kept (Azure AD B2C policies)")
    func ordinaryEndpointQuery() throws {
        let parsed = try provider(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            authorization_endpoint = "https://idp.example.com/authorize?p=B2C_1_signin"
            """)
        #expect(parsed.endpoints.authorization?.query == "p=B2C_1_signin")
    }

    @Test(
        "an issuer with a query is rejected (RFC 8414 §2)", arguments: ["https://idp.example.com?tenant=1", "https://idp.example.com/#x"])
    func issuerWithQuery(issuer: String) {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "\(issuer)"
            """)
        #expect(found.map(\.field) == ["issuer"])
    }

    @Test("loopback_port takes one registered port or a list, tried in order")
    func loopbackPorts() throws {
        let one = try provider(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            loopback_port = 38100
            """)
        #expect(one.loopbackPorts == [38100])
        #expect(one.redirectURITemplate == "http://127.0.0.1:38100/oauth2redirect/test")
        let list = try provider(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            loopback_port = [38100, 38101]
            """)
        #expect(list.loopbackPorts == [38100, 38101])
    }

    @Test("a loopback_port that is not a usable port is rejected", arguments: ["0", "80", "70000", "\"38100\"", "[]", "[38100, \"x\"]"])
    func badLoopbackPort(value: String) {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            loopback_port = \(value)
            """)
        #expect(found.map(\.field) == ["loopback_port"])
        #expect(found.first?.line == 4)
    }

    @Test("par takes auto, always or never, auto when absent; another value is an error on its line")
    func pushedAuthorizationChoice() throws {
        let base = """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            """
        #expect(try provider(base).choices.pushedAuthorization == .auto)
        #expect(try provider(base + "\npar = \"never\"").choices.pushedAuthorization == .never)
        let found = errors(base + "\npar = \"sometimes\"")
        #expect(found.map(\.field) == ["par"] && found.first?.line == 4)
        #expect(found.first?.message.contains("\"auto\", \"always\", \"never\"") == true)
    }

    @Test("dpop takes auto, always or never, auto when absent; another value is an error on its line")
    func proofOfPossessionChoice() throws {
        let base = """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            """
        #expect(try provider(base).choices.proofOfPossession == .auto)
        #expect(try provider(base + "\ndpop = \"always\"").choices.proofOfPossession == .always)
        #expect(errors(base + "\ndpop = true").map(\.field) == ["dpop"])
    }

    @Test("resources are absolute URIs without a fragment, each bad one an error on its line")
    func resources() throws {
        let base = """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            """
        #expect(try provider(base + "\nresources = [\"https://api.example/\"]").choices.resources == ["https://api.example/"])
        let found = errors(base + "\nresources = [\"https://api.example/#top\", \"api\"]")
        #expect(found.map(\.field) == ["resources", "resources"] && found.allSatisfy { $0.line == 4 })
    }

    @Test("grant = client_credentials needs an absolute client_secret_file; authorization_code is the default")
    func clientCredentialsGrant() throws {
        let base = """
            display_name = "CI"
            kind = "oauth2"
            authorization_endpoint = "https://idp.example.com/auth"
            token_endpoint = "https://idp.example.com/token"
            """
        #expect(try provider(base).choices.grant == .authorizationCode)
        let machine = try provider(base + "\ngrant = \"client_credentials\"\nclient_secret_file = \"/run/secrets/ci\"")
        #expect(machine.choices.grant == .clientCredentials && machine.choices.clientSecretFile == "/run/secrets/ci")
        #expect(errors(base + "\ngrant = \"client_credentials\"").map(\.field) == ["grant"])
        #expect(errors(base + "\ngrant = \"client_credentials\"\nclient_secret_file = \"ci\"").map(\.field) == ["client_secret_file"])

    }

    @Test("git_resource is a resource indicator like those in resources; a relative one is an error on its line")
    func gitResource() throws {
        let base = """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            """
        #expect(try provider(base + "\ngit_resource = \"https://git.example/\"").choices.gitResource == "https://git.example/")
        let found = errors(base + "\ngit_resource = \"git\"")
        #expect(found.map(\.field) == ["git_resource"] && found.first?.line == 4)
    }

    @Test("private_key_file replaces client_secret_file, not both, only for client_credentials; private_key_id needs it")
    func privateKeyFile() throws {
        let base = """
            display_name = "CI"
            kind = "oauth2"
            authorization_endpoint = "https://idp.example.com/auth"
            token_endpoint = "https://idp.example.com/token"
            grant = "client_credentials"
            """
        let machine = try provider(base + "\nprivate_key_file = \"/run/secrets/ci.pem\"\nprivate_key_id = \"k1\"")
        #expect(machine.choices.privateKeyFile == "/run/secrets/ci.pem" && machine.choices.privateKeyID == "k1")
        let both = errors(base + "\nclient_secret_file = \"/run/secrets/ci\"\nprivate_key_file = \"/run/secrets/ci.pem\"")
        #expect(both.map(\.field) == ["private_key_file"] && both.first?.line == 7)
        #expect(both.first?.message.contains("client_secret_file") == true)
        #expect(errors(base + "\nprivate_key_file = \"ci.pem\"").map(\.field) == ["private_key_file"])
        #expect(errors(base + "\nprivate_key_id = \"k1\"").map(\.field) == ["private_key_id", "grant"])
        let person = base.replacingOccurrences(of: "grant = \"client_credentials\"", with: "")
        #expect(errors(person + "\nprivate_key_file = \"/run/secrets/ci.pem\"").map(\.field) == ["private_key_file"])
    }

    @Test("a loopback_host that is not a loopback address is rejected")
    func nonLoopbackHost() {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            loopback_host = "0.0.0.0"
            """)
        #expect(found.map(\.field) == ["loopback_host"])
        #expect(found.first?.line == 4)
    }

    @Test(
        "a redirect_path a browser would rewrite, or with a query, or without a leading slash, is rejected",
        arguments: ["/cb?x=1", "//cb", "cb", "/", "/cb#f", "/a/../b", "/a/./b", "/a/..", "/.", "/a//b", "/cb/."])
    func badRedirectPath(path: String) {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            redirect_path = "\(path)"
            """)
        #expect(found.map(\.field) == ["redirect_path"])
    }

    @Test("without an issuer, an oidc file must list authorization, token and jwks endpoints")
    func noIssuerNeedsEndpoints() {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            """)
        #expect(Set(found.compactMap(\.field)) == ["authorization_endpoint", "token_endpoint", "jwks_uri"])
    }

    @Test("a file name that cannot be a provider name is rejected")
    func badFileName() {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            """, file: "/etc/latchkey/providers.d/my provider.toml")
        let error = found.first { $0.field == nil }
        #expect(error?.message.contains("file name") == true)
        #expect(error?.file == "/etc/latchkey/providers.d/my provider.toml")
    }

    @Test("invalid TOML is reported with the line it breaks on")
    func invalidTOML() throws {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com
            client_id = "abc"
            """)
        let error = try #require(found.first)
        #expect(found.count == 1)
        #expect(error.file == file)
        #expect(error.line == 3)
        #expect(error.message.hasPrefix("not valid TOML"))
    }

    @Test("every problem in a file is reported, not only the first")
    func allErrorsCollected() {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "http://idp.example.com"
            scopes = "openid"
            colour = "blue"
            """)
        #expect(Set(found.compactMap(\.field)) == ["issuer", "scopes", "colour"])
        #expect(found.map(\.line).sorted { ($0 ?? 0) < ($1 ?? 0) } == [3, 4, 5])
    }

    @Test("an error prints as FILE:LINE: FIELD: message")
    func descriptionFormat() throws {
        let error = try #require(
            errors(
                """
                display_name = "Test"
                kind = "oidc"
                issuer = "https://idp.example.com"
                scopes = "openid"
                """
            ).first)
        #expect(error.description == "\(file):4: scopes: \(error.message)")
        #expect(ProviderFileError(file: "/p/a.toml", line: 2, field: "kind", message: "m").description == "/p/a.toml:2: kind: m")
        #expect(ProviderFileError(file: "/p/a.toml", field: "kind", message: "m").description == "/p/a.toml: kind: m")
        #expect(ProviderFileError(file: "/p/a.toml", message: "m").description == "/p/a.toml: m")
    }

    @Test("control characters from the file never reach the error text")
    func sanitisedValuesInErrors() {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc\\u001b]0;pwned\\u0007"
            issuer = "https://idp.example.com"
            """)
        #expect(found.map(\.field) == ["kind"])
        #expect(!found.contains { $0.description.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 } })
    }

    // MARK: - git_hosts and git_username

    @Test("git_hosts takes hosts, host:port and bracketed IPv6 entries; hosts are compared lowercased")
    func gitHosts() throws {
        let provider = try provider(
            """
            display_name = "Test"
            kind = "oauth2"
            issuer = "https://idp.example.com"
            git_hosts = ["GitLab.Example.com", "git.example.com:8443", "[2001:db8::1]:443", "127.0.0.1"]
            git_username = "x-access-token"
            """)
        #expect(
            provider.gitHosts == [
                GitHost(host: "gitlab.example.com"), GitHost(host: "git.example.com", port: 8443),
                GitHost(host: "[2001:db8::1]", port: 443),
                GitHost(host: "127.0.0.1"),
            ])
        #expect(provider.gitUsername == "x-access-token")
    }

    @Test("without git keys a provider maps no git host and would answer git as oauth2")
    func gitDefaults() throws {
        let provider = try provider("display_name = \"Test\"\nkind = \"oidc\"\nissuer = \"https://idp.example.com\"\n")
        #expect(provider.gitHosts.isEmpty)
        #expect(provider.gitUsername == "oauth2")
    }

    @Test(
        "a git_hosts entry that is not host[:port] is refused at its line, naming the entry",
        arguments: [
            "https://gitlab.example.com", "gitlab.example.com/group", "alice@gitlab.example.com", "gitlab.example.com:0",
            "gitlab.example.com:65536", "gitlab.example.com:", "gitlab.example.com:https", "[2001:db8::zz]", "2001:db8::1", "[::1",
            "-bad-.example.com", "a..b", "", "gitlab example.com",
        ])
    func badGitHost(entry: String) {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            git_hosts = ["ok.example.com", "\(entry)"]
            """)
        #expect(found.map(\.field) == ["git_hosts"])
        #expect(found.first?.line == 4)
        #expect(found.first?.description.contains("\"\(entry)\"") == true)
    }

    @Test("git_hosts must be an array of strings", arguments: ["\"gitlab.example.com\"", "[443]"])
    func gitHostsNotStrings(value: String) {
        let found = errors(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            git_hosts = \(value)
            """)
        #expect(found.map(\.field) == ["git_hosts"])
    }

    @Test("git_hosts and git_username are refused in firebase files")
    func gitKeysInFirebase() {
        let found = errors(
            """
            display_name = "Test"
            kind = "firebase"
            api_key = "fake-key"
            project_id = "demo"
            git_hosts = ["gitlab.example.com"]
            git_username = "oauth2"
            """)
        #expect(found.map(\.field) == ["git_hosts", "git_username"])
        #expect(found.allSatisfy { $0.message.contains("not used by kind = \"firebase\"") })
    }

    // MARK: - registry_hosts and registry_username

    @Test("registry_hosts takes host and host:port entries, and registry_username its user name")
    func registryHosts() throws {
        let provider = try parse(
            """
            display_name = "Test"
            kind = "oidc"
            issuer = "https://idp.example.com"
            registry_hosts = ["Europe-Docker.pkg.dev", "localhost:5000"]
            registry_username = "<token>"
            """
        ).get()
        #expect(provider.registryHosts == [GitHost(host: "europe-docker.pkg.dev"), GitHost(host: "localhost", port: 5000)])
        #expect(provider.registryUsername == "<token>")
    }

    @Test("without registry keys a provider maps no registry and would answer as oauth2accesstoken")
    func registryDefaults() throws {
        let provider = try parse("display_name = \"Test\"\nkind = \"oidc\"\nissuer = \"https://idp.example.com\"\n").get()
        #expect(provider.registryHosts.isEmpty)
        #expect(provider.registryUsername == "oauth2accesstoken")
    }

    @Test(
        "a bad registry_hosts entry or registry_username is refused at its line",
        arguments: [
            ("registry_hosts = [\"https://registry.example.com/v2/\"]", "registry_hosts"),
            ("registry_hosts = \"registry.example.com\"", "registry_hosts"),
            ("registry_username = \"\"", "registry_username"),
            ("registry_username = \"a\\nb\"", "registry_username"),
        ])
    func badRegistryKeys(line: String, field: String) {
        let found = errors("display_name = \"Test\"\nkind = \"oidc\"\nissuer = \"https://idp.example.com\"\n\(line)\n")
        #expect(found.map(\.field) == [field])
        #expect(found.first?.line == 4)
    }

    // MARK: - Shipped presets

    @Test("every preset in the repository's providers.d parses without an error")
    func shippedPresets() throws {
        let directory = FixtureFolder.repositoryRoot.appendingPathComponent("providers.d").path
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".toml") }.sorted()
        #expect(names.count >= 7)
        for name in names {
            let path = directory + "/" + name
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let result = ProviderFileParser().parse(text, file: path)
            if case .failure(let failure) = result {
                Issue.record("\(name): \(failure.errors.map(\.description).joined(separator: "\n"))")
            }
        }
        let catalog = ProviderCatalog.load(directories: [directory])
        #expect(catalog.errors.map(\.description) == [])
        #expect(catalog.providers.count == names.count)
    }
}

@Suite("Texts that would crash the TOML library (found by fuzzing)")
struct TOMLPreflightTests {
    @Test(
        "a table header opened by a comment or without a key is an error on its line, not an abort",
        arguments: ["[#", "[# x", "[[#", "display_name = \"x\"\n  [ # table", "[[ \t# y", "[\u{1C}\u{1C}#", "[\u{3000}#", "[]"])
    func headerComment(text: String) {
        guard case .failure(let failure) = ProviderFileParser().parse(text, file: "/p/x.toml") else {
            Issue.record("parsed")
            return
        }
        #expect(failure.errors.first?.message.contains("not valid TOML") == true)
        #expect(failure.errors.first?.line == text.split(separator: "\n").count)
    }

    @Test("a table header with a quoted key still parses")
    func quotedHeader() {
        #expect(TOMLPreflight.problem(in: "[\"quoted\"]\nx = 1\n[ bare ]\n[[ \t'lit' ]]") == nil)
    }

    @Test("a NUL byte is refused instead of cutting the text short")
    func nulByte() {
        guard
            case .failure(let failure) = ProviderFileParser().parse(
                "display_name = \"x\"\nkind = \"oidc\"\u{0}\nbad = 1", file: "/p/x.toml")
        else {
            Issue.record("parsed")
            return
        }
        #expect(failure.errors.first?.line == 2)
    }

    @Test("arrays and inline tables whose first element is a string with a hash still parse")
    func ordinaryBrackets() throws {
        let parsed = try ProviderFileParser().parse(
            """
            display_name = "x"
            kind = "oidc"
            issuer = "https://idp.example.com"
            scopes = ["openid", "#not-a-comment"]
            """, file: "/p/x.toml"
        ).get()
        #expect(parsed.scopes.contains("#not-a-comment"))
    }

    @Test("a byte order mark before a table header does not hide it from the check (toml++ skips the mark, then aborted)")
    func byteOrderMark() {
        #expect(TOMLPreflight.problem(in: "\u{FEFF}[#")?.line == 1)
        #expect(TOMLPreflight.problem(in: "\u{FEFF}\t\t\t\t[\t\t\t\t\t\t\t\t\t\t\t\r\t\t=\t\t\t\t\n")?.line == 1)
        #expect(TOMLPreflight.problem(in: "\u{FEFF}[table]\nx = 1") == nil)
    }

    @Test(
        "a } where an array expects a value is an error on its line, not an abort (found by the long fuzz run)",
        arguments: [
            ("loopback_port = [}", 1), ("display_name = \"x\"\nloopback_port = [1, }", 2), ("x = [ # c\n }", 2),
            ("x = [\n\"a\",\n}\n", 3), ("t = { a = [} }", 1), ("x = \"\"\"\n]\n\"\"\"\ny = [}", 4),
            ("bi_fi= [}\nredirect_taph = \"/,crts\"", 1),
        ])
    func braceAsArrayValue(text: String, line: Int) {
        guard case .failure(let failure) = ProviderFileParser().parse(text, file: "/p/x.toml") else {
            Issue.record("parsed")
            return
        }
        #expect(failure.errors.first?.message.contains("`}` where the array expects a value") == true)
        #expect(failure.errors.first?.line == line)
    }

    @Test("a } inside strings, comments, inline tables and table headers is no problem")
    func braceElsewhere() {
        let texts = [
            "x = [\"}\", '}', \"\"\"a\n}\"\"\", '''\n}''']", "x = [1, 2] # [}", "x = { a = 1 }", "[\"a}\"]\nx = 1", "x = [{}, {a = [1]}]",
            "x = [ ]", "x = \"[\\\"\" \ny = [\"}\"]", "x = [\n  1,\n  2,\n]",
        ]
        for text in texts { #expect(TOMLPreflight.braceWhereArrayValueGoes(in: Array(text.unicodeScalars)) == nil, "\(text)") }
    }

    @Test("a CRLF file is checked line by line: a bad header is found on its line, and a good file parses")
    func crlfLines() throws {
        #expect(TOMLPreflight.problem(in: "x = 1\r\n[#\r\n")?.line == 2)
        #expect(TOMLPreflight.problem(in: "x = 1\r\n[\r\n")?.line == 2)
        #expect(TOMLPreflight.problem(in: "[table]\r\nx = 1\r\n") == nil)
        let parsed = try ProviderFileParser().parse(
            "display_name = \"x\"\r\nkind = \"oidc\"\r\nissuer = \"https://idp.example.com\"\r\n", file: "/p/x.toml"
        ).get()
        #expect(parsed.displayName == "x")
    }

    static func repeated(_ text: String, _ count: Int) -> String { String(repeating: text, count: count) }
    static func dotted(_ count: Int, _ part: String = "a") -> String { Array(repeating: part, count: count).joined(separator: ".") }

    static let tooDeep: [(String, String)] = [
        ("x = " + repeated("[", 17) + repeated("]", 17), "nests arrays and inline tables"),
        ("x = " + repeated("{a=", 17) + "1" + repeated("}", 17), "nests arrays and inline tables"),
        ("x = [" + repeated("{a=[", 9) + repeated("]}", 9) + "]", "nests arrays and inline tables"),
        (dotted(17) + " = 1", "dotted parts"),
        ("x = { " + dotted(17) + " = 1 }", "dotted parts"),
        ("[" + dotted(500_000) + "]", "larger than 64 KiB"),
        ("[" + dotted(17) + "]", "dotted parts"),
        ("[[" + dotted(17, "\"a.b\"") + "]]", "dotted parts"),
    ]

    @Test(
        "nesting deeper than the reader allows is an error on its line, before toml++ recurses into it (a dotted key of half a million parts crashed every command)",
        arguments: tooDeep)
    func depthIsBounded(text: String, message: String) {
        let problem = TOMLPreflight.problem(in: text)
        #expect(problem?.line == 1)
        #expect(problem?.message.contains(message) == true, "\(String(describing: problem))")
    }

    @Test("what the provider files need still passes: sixteen levels, dots inside quoted keys, strings and numbers")
    func depthLimitLeavesRoom() {
        #expect(TOMLPreflight.problem(in: "x = " + String(repeating: "[", count: 16) + String(repeating: "]", count: 16)) == nil)
        let manyDots = Self.dotted(18)
        #expect(TOMLPreflight.problem(in: "[\"\(manyDots)\"]\nx = 1.5\ny = \"\(manyDots)\"") == nil)
        #expect(TOMLPreflight.problem(in: "extra_authorization_params = { prompt = \"login\", ui.locales = \"en\" }") == nil)
    }

    @Test("more keys than any provider file has are refused on the line where the limit is crossed, so errors stay linear")
    func keyCountIsBounded() {
        let many = (0...TOMLPreflight.maximumKeys).map { "unknown_\($0) = 1" }.joined(separator: "\n")
        #expect(TOMLPreflight.problem(in: many) == .init(line: TOMLPreflight.maximumKeys + 1, message: "has more than 512 keys"))
        let enough = (0..<TOMLPreflight.maximumKeys).map { "unknown_\($0) = 1" }.joined(separator: "\n")
        #expect(TOMLPreflight.problem(in: enough) == nil)
    }

    @Test(
        "an escaped NUL in a basic string is refused instead of cutting the value short (a git_hosts entry named another host)",
        arguments: [#"git_hosts = ["evil.example\u0000.github.com"]"#, #"display_name = "x\U00000000y""#, "x = \"\"\"\na\\u0000\"\"\""])
    func escapedNUL(text: String) {
        #expect(TOMLPreflight.problem(in: text)?.message.contains("escaped NUL") == true)
    }

    @Test("an escaped backslash before u0000, and NUL-looking text in literal strings, are only text")
    func notANUL() {
        #expect(TOMLPreflight.problem(in: #"x = "a\\u0000b""#) == nil)
        #expect(TOMLPreflight.problem(in: #"x = 'a\u0000b'"#) == nil)
        #expect(TOMLPreflight.problem(in: #"x = "\u0001""#) == nil)
    }
}

@Suite("Configuration files are read only when they are regular files of a sane size")
struct TextFileTests {
    @Test("a FIFO, a directory and a file over the limit are refused without reading them; a provider file is read")
    func refusesWhatIsNotAFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.path + "/fifo.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(TextFile.read(fifo) == .failure(.notRegular))
        #expect(TextFile.read(directory.path) == .failure(.notRegular))
        let large = directory.path + "/large.toml"
        #expect(FileManager.default.createFile(atPath: large, contents: Data(count: TOMLPreflight.maximumBytes + 1)))
        #expect(TextFile.read(large) == .failure(.tooLarge(limit: TOMLPreflight.maximumBytes)))
        #expect(TextFile.read(directory.path + "/absent.toml") == .failure(.missing))
        let good = directory.path + "/good.toml"
        #expect(FileManager.default.createFile(atPath: good, contents: Data("x = 1\n".utf8)))
        #expect(TextFile.read(good) == .success("x = 1\n"))
    }

    @Test("a sparse file claiming terabytes is refused by its size before a byte is read")
    func sparseFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sparse = directory.path + "/sparse.toml"
        #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
        #expect(truncate(sparse, 1 << 40) == 0)
        #expect(TextFile.read(sparse) == .failure(.tooLarge(limit: TOMLPreflight.maximumBytes)))
    }
}
