import Foundation
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyProviders
@testable import LatchkeySupport
@testable import LatchkeyVault

/// `OpenBaoClient`: the JWT login as OpenBao's API defines it, its answer read strictly, OpenBao's
/// errors kept as it said them, the addresses tried in order, and the names and addresses a
/// person types checked before anything is sent.
@Suite("OpenBao's API: the JWT login, its answers and the addresses")
struct OpenBaoClientTests {
    static let idToken = Secret("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl")
    static let loginPath = "/v1/auth/jwt/login"

    static func loginAnswer(token: String = "s.KiCrtZDeUvYQSk7Bfj3f5Ew2") -> String {
        """
        {"request_id":"8b9f8d47","lease_id":"","renewable":false,"lease_duration":0,"data":null,"wrap_info":null,"warnings":null,
         "auth":{"client_token":"\(token)","accessor":"aGz2kTy","policies":["default","team"],"token_policies":["default","team"],
                 "metadata":{"role":"team"},"lease_duration":600,"renewable":true,"entity_id":"e1","token_type":"service","orphan":true}}
        """
    }

    static func client(_ transport: RecordingTransport, addresses: [String] = ["https://bao.test.example:8200"]) -> OpenBaoClient {
        OpenBaoClient(addresses: addresses.map { URL(string: $0)! }, transport: transport)
    }

    static func login(status: Int = 200, body: String) async -> Result<Secret, OpenBaoError> {
        let transport = RecordingTransport()
        transport.route(loginPath, status: status, json: body)
        do {
            return .success(try await client(transport).login(jwt: idToken, role: "team", mount: "jwt"))
        } catch {
            return .failure(error)
        }
    }

    static func problem(status: Int = 200, body: String) async -> OpenBaoError? {
        if case .failure(let error) = await login(status: status, body: body) { return error }
        return nil
    }

    // MARK: - The login

    @Test("the login is a JSON POST of role and jwt to auth/MOUNT/login, with no token, and gives auth.client_token")
    func login() async throws {
        let transport = RecordingTransport()
        transport.route("/v1/auth/team/oidc/login", status: 200, json: Self.loginAnswer())
        let token = try await Self.client(transport).login(jwt: Self.idToken, role: "deploy", mount: "team/oidc")
        #expect(token.exposedValue == "s.KiCrtZDeUvYQSk7Bfj3f5Ew2")
        let request = try #require(transport.sent.first)
        #expect(request.method == .post && request.url.absoluteString == "https://bao.test.example:8200/v1/auth/team/oidc/login")
        #expect(request.header("Content-Type") == "application/json" && request.header("X-Vault-Token") == nil)
        #expect(transport.body(0) as? [String: String] == ["role": "deploy", "jwt": Self.idToken.exposedValue])
    }

    @Test("an address with a path or a trailing slash keeps its path before /v1/")
    func addressWithPath() async throws {
        let transport = RecordingTransport()
        transport.route("/bao/v1/auth/jwt/login", status: 200, json: Self.loginAnswer())
        _ = try await Self.client(transport, addresses: ["https://proxy.test.example/bao/"]).login(
            jwt: Self.idToken, role: "team", mount: "jwt")
        #expect(transport.sent.map(\.url.absoluteString) == ["https://proxy.test.example/bao/v1/auth/jwt/login"])
    }

    // MARK: - OpenBao's refusals

    @Test("OpenBao's errors become one line with the HTTP status, terminal controls made inert")
    func refusal() async throws {
        let body = #"{"errors":["role \"nope\" could not be found","second\n\u001b[31m red \u202e"]}"#
        let error = try #require(await Self.problem(status: 400, body: body))
        #expect(
            error
                == .refused(
                    action: "the JWT login at auth/jwt", host: "bao.test.example:8200", status: 400,
                    errors: ["role \"nope\" could not be found", "second\n\u{1B}[31m red \u{202E}"]))
        #expect(error.category == .rejected)
        #expect(
            error.description.hasPrefix(
                "OpenBao at bao.test.example:8200 refused the JWT login at auth/jwt (HTTP 400): role \"nope\" could not be found; second"))
        #expect(!error.description.unicodeScalars.contains { ["\u{1B}", "\n", "\u{202E}"].contains($0) }, "\(error.description)")
    }

    @Test("OpenBao's 5xx with its errors is a refusal to retry; a 5xx page without them says try again later")
    func serverErrors() async throws {
        let serverError = try #require(await Self.problem(status: 500, body: #"{"errors":["internal error"]}"#))
        #expect(serverError.category == .unavailable && serverError.description.contains("(HTTP 500): internal error"))
        let gateway = try #require(await Self.problem(status: 502, body: "<html>Bad Gateway</html>"))
        #expect(gateway == .unavailable(host: "bao.test.example:8200", status: 502))
        #expect(gateway.category == .unavailable)
    }

    @Test(
        "answers that are not OpenBao's are refused with what is wrong, and no token is taken from them",
        arguments: [
            (200, "<html>hello</html>", "not JSON"),
            (200, "[1, 2]", "not a JSON object"),
            (200, #"{"data":{}}"#, "no auth object"),
            (200, #"{"auth":"s.token"}"#, "no auth object"),
            (200, #"{"auth":{}}"#, "auth.client_token is missing"),
            (200, #"{"auth":{"client_token":42}}"#, "auth.client_token is missing or not a string"),
            (200, #"{"auth":{"client_token":""}}"#, "auth.client_token is missing"),
            (200, #"{"auth":{"client_token":"s.abc def"}}"#, "auth.client_token holds characters no token has"),
            (200, #"{"auth":{"client_token":"s.abc\r\nX-Injected: 1"}}"#, "auth.client_token holds characters no token has"),
            (200, #"{"auth":{"client_token":"s.abc\u001b[2J"}}"#, "auth.client_token holds characters no token has"),
            (400, #"{"error":"bad"}"#, "HTTP 400 without OpenBao's errors list"),
            (403, "forbidden", "HTTP 403 without OpenBao's errors list"),
            (400, #"{"errors":[{"message":"x"}]}"#, "errors that are not strings"),
        ])
    func malformedAnswers(status: Int, body: String, expected: String) async throws {
        let error = try #require(await Self.problem(status: status, body: body))
        guard case .malformedAnswer(let action, let host, let problem) = error else { Issue.record("\(error)"); return }
        #expect(problem.contains(expected), "\(problem)")
        #expect(action == "the JWT login at auth/jwt" && host == "bao.test.example:8200")
        #expect(error.category == .rejected && error.description.hasSuffix("; nothing was used"))
        #expect(!error.description.contains("s.abc"), "no token-like value reaches the message")
    }

    @Test("mutated answers never crash the reader: each gives a visible-ASCII token or an error")
    func mutatedAnswers() async {
        var generator = SplitMix(seed: 0x0BA0_2026)
        let valid = Array(Self.loginAnswer().utf8)
        let pieces = Array("{}[]\":,\\ntu0.-e".utf8) + [0, 0x80, 0xFF, 0x0A, 0x1B]
        for bytes in generator.mutants(of: valid, pieces: pieces, count: 500, span: 30) {
            switch await Self.login(body: String(decoding: bytes, as: UTF8.self)) {
            case .success(let token): #expect(TokenText.isValid(token.exposedValue))
            case .failure(let error): #expect(!error.description.isEmpty)
            }
        }
    }

    // MARK: - Addresses tried in order

    @Test("an address that cannot be reached, or answers 503 (sealed), is passed over for the next; a refusal is final")
    func addressesInOrder() async throws {
        let transport = RecordingTransport()
        transport.route(Self.loginPath) { request in
            switch request.url.port {
            case 8201: return .failure(.unreachable(host: "bao-1", reason: "connection refused"))
            case 8202: return .success(HTTPResponse(status: 503, body: Array(#"{"errors":["Vault is sealed"]}"#.utf8)))
            case 8203: return .success(HTTPResponse(status: 400, body: Array(#"{"errors":["no such role"]}"#.utf8)))
            default: return .success(HTTPResponse(status: 200, body: Array(Self.loginAnswer().utf8)))
            }
        }
        let addresses = (8201...8204).map { "http://127.0.0.1:\($0)" }
        let three = Self.client(transport, addresses: [addresses[0], addresses[1], addresses[3]])
        #expect(try await three.login(jwt: Self.idToken, role: "team", mount: "jwt").exposedValue == "s.KiCrtZDeUvYQSk7Bfj3f5Ew2")
        #expect(transport.sent.map { $0.url.port } == [8201, 8202, 8204])

        await #expect(
            throws: OpenBaoError.refused(action: "the JWT login at auth/jwt", host: "127.0.0.1:8203", status: 400, errors: ["no such role"])
        ) {
            try await Self.client(transport, addresses: [addresses[2], addresses[3]]).login(jwt: Self.idToken, role: "team", mount: "jwt")
        }
        #expect(transport.sent.map { $0.url.port }.suffix(1) == [8203], "the node after a refusing one is not asked")
    }

    @Test("when no address answers, the error names OpenBao and each address with what happened there")
    func noneAnswers() async throws {
        let transport = RecordingTransport()
        transport.route(Self.loginPath) { request in
            request.url.port == 8201
                ? .failure(.timedOut(host: "127.0.0.1")) : .success(HTTPResponse(status: 503, body: Array("sealed".utf8)))
        }
        let client = Self.client(transport, addresses: ["http://127.0.0.1:8201", "http://127.0.0.1:8202"])
        do {
            _ = try await client.login(jwt: Self.idToken, role: "team", mount: "jwt")
            Issue.record("a token from no node")
        } catch {
            guard case .unreachable(let tried) = error else { Issue.record("\(error)"); return }
            #expect(
                tried.count == 2 && tried[0].hasPrefix("127.0.0.1:8201: ") && tried[1] == "127.0.0.1:8202: HTTP 503 (sealed or not ready)")
            #expect(error.category == .unavailable && error.description.hasPrefix("cannot reach OpenBao at 127.0.0.1:8201: "))
        }
    }

    @Test(
        "a standby that cannot reach the active node answers 307 to it; that node is passed over for the next, the redirect never followed")
    func redirectingStandby() async throws {
        let transport = RecordingTransport()
        transport.route(Self.loginPath) { request in
            request.url.port == 8201
                ? .success(HTTPResponse(status: 307, headers: [("Location", "http://127.0.0.1:8209/v1/auth/jwt/login")], body: []))
                : .success(HTTPResponse(status: 200, body: Array(Self.loginAnswer().utf8)))
        }
        let client = Self.client(transport, addresses: ["http://127.0.0.1:8201", "http://127.0.0.1:8202"])
        #expect(try await client.login(jwt: Self.idToken, role: "team", mount: "jwt").exposedValue == "s.KiCrtZDeUvYQSk7Bfj3f5Ew2")
        #expect(transport.sent.map { $0.url.port } == [8201, 8202])

        let alone = Self.client(transport, addresses: ["http://127.0.0.1:8201"])
        await #expect(throws: OpenBaoError.unreachable(tried: ["127.0.0.1:8201: HTTP 307 (a standby that cannot reach the active node)"])) {
            try await alone.login(jwt: Self.idToken, role: "team", mount: "jwt")
        }
    }

    @Test("when every address is sealed the error says OpenBao is sealed and names each address; one sealed among others is passed over")
    func sealed() async throws {
        let transport = RecordingTransport()
        transport.route(Self.loginPath) { request in
            request.url.port == 8203
                ? .success(HTTPResponse(status: 200, body: Array(Self.loginAnswer().utf8)))
                : .success(HTTPResponse(status: 503, body: Array(#"{"errors":["Vault is sealed"]}"#.utf8)))
        }
        let two = Self.client(transport, addresses: ["http://127.0.0.1:8201", "http://127.0.0.1:8202"])
        do {
            _ = try await two.login(jwt: Self.idToken, role: "team", mount: "jwt")
            Issue.record("a token from sealed nodes")
        } catch {
            #expect(error == .sealed(hosts: ["127.0.0.1:8201", "127.0.0.1:8202"]) && error.category == .unavailable)
            #expect(error.description.hasPrefix("OpenBao is sealed at 127.0.0.1:8201, 127.0.0.1:8202; nothing was read or changed"))
        }
        let three = Self.client(transport, addresses: ["http://127.0.0.1:8201", "http://127.0.0.1:8203"])
        #expect(try await three.login(jwt: Self.idToken, role: "team", mount: "jwt").exposedValue == "s.KiCrtZDeUvYQSk7Bfj3f5Ew2")
    }

    @Test(
        "a KV engine just enabled, still upgrading its storage, is asked again every 250 ms for up to 10 s; then its refusal is the answer")
    func upgradingEngine() async throws {
        let path = "/v1/secret/data/team/alice"
        let upgrading = [
            #"{"errors":["Upgrading from non-versioned to versioned data. This backend will be unavailable for a brief period and will resume service shortly."]}"#,
            #"{"errors":["Waiting for the primary to upgrade from non-versioned to versioned data. This backend will be unavailable for a brief period and will resume service when the primary is finished."]}"#,
        ]
        let served = #"{"data":{"data":{"record":"x"},"metadata":{"version":2}}}"#
        let waited = Mutex<Duration>(.zero)
        let asked = Mutex(0)
        let transport = RecordingTransport()
        transport.route(path) { _ in
            let count = asked.withLock { count in
                count += 1
                return count
            }
            let answer = count <= 4 ? (400, upgrading[count % 2]) : (200, served)
            return .success(HTTPResponse(status: answer.0, body: Array(answer.1.utf8)))
        }
        let client = OpenBaoClient(
            addresses: [URL(string: "http://127.0.0.1:8201")!], transport: transport, pause: { pause in waited.withLock { $0 += pause } })
        let secret = try await client.read(mount: "secret", path: "team/alice", token: Secret("s.t"))
        #expect(secret?.version == 2 && transport.sent(to: path).count == 5)
        #expect(waited.withLock { $0 } == .seconds(1))

        transport.route(path, status: 400, json: upgrading[0])
        waited.withLock { $0 = .zero }
        do {
            _ = try await client.write(["record": "y"], mount: "secret", path: "team/alice", replacing: 2, token: Secret("s.t"))
            Issue.record("a write an upgrading engine refused")
        } catch {
            guard case .refused(_, _, 400, let errors) = error else { Issue.record("\(error)"); return }
            #expect(errors[0].hasPrefix("Upgrading from non-versioned to versioned data"))
            #expect(waited.withLock { $0 } == .seconds(10), "gave up after 10 s")
        }
    }

    // MARK: - What the person types

    static func address(option: String?, configured: String? = nil, _ environment: [String: String]) throws(OpenBaoError) -> String {
        try OpenBaoClient.address(
            option: option, configured: configured.map { URL(string: $0)! }, environment: environment, provider: "corp"
        )
        .absoluteString
    }

    @Test("the address is --address, else openbao_address, else BAO_ADDR, else VAULT_ADDR; an empty variable counts as unset")
    func addressSources() throws {
        let bao = "https://bao.test.example:8200", vault = "https://vault.test.example:8200", file = "https://file.test.example:8200"
        #expect(try Self.address(option: "http://127.0.0.1:8200", configured: file, ["BAO_ADDR": bao]) == "http://127.0.0.1:8200")
        #expect(try Self.address(option: nil, configured: file, ["BAO_ADDR": bao]) == file)
        #expect(try Self.address(option: nil, ["BAO_ADDR": bao, "VAULT_ADDR": vault]) == bao)
        #expect(try Self.address(option: nil, ["BAO_ADDR": "", "VAULT_ADDR": vault]) == vault)
        #expect(throws: OpenBaoError.noAddress(provider: "corp")) { try Self.address(option: nil, ["BAO_ADDR": ""]) }
        #expect(OpenBaoError.noAddress(provider: "corp").category == .usage)
        #expect(OpenBaoError.noAddress(provider: "corp").description.contains("set openbao_address in the provider file of corp"))
    }

    @Test("openbao_address in a provider file of any kind is checked as --address is")
    func providerFileAddress() throws {
        let oidc = "kind = \"oidc\"\ndisplay_name = \"Corp\"\nissuer = \"https://idp.example\"\nclient_id = \"c\"\n"
        let firebase = "kind = \"firebase\"\ndisplay_name = \"App\"\napi_key = \"k\"\nproject_id = \"p\"\n"
        for (head, file) in [(oidc, "/p/corp.toml"), (firebase, "/p/app.toml")] {
            let provider = try ProviderFileParser().parse(head + "openbao_address = \"https://bao.example:8200\"\n", file: file).get()
            #expect(provider.openBaoAddress?.absoluteString == "https://bao.example:8200", "\(file)")
        }
        for (raw, expected) in [
            ("http://bao.example:8200", "must use https"), ("https://bao.example/?ns=team", "must not contain a ?query"),
        ] {
            guard case .failure(let errors) = ProviderFileParser().parse(oidc + "openbao_address = \"\(raw)\"\n", file: "/p/corp.toml")
            else {
                Issue.record("\(raw) was taken")
                continue
            }
            #expect(errors.errors.map(\.field) == ["openbao_address"] && errors.errors[0].message.contains(expected), "\(errors)")
            #expect(errors.errors[0].line == 5)
        }
    }

    @Test(
        "an address must be https, or http to loopback, with no query or fragment",
        arguments: [
            ("http://bao.test.example:8200", "must use https"),
            ("http://10.0.0.8:8200", "must use https"),
            ("https://bao.test.example:8200/?x=1", "must not contain a ?query"),
            ("https://bao.test.example:8200/#x", "#fragment"),
            ("bao.test.example:8200", "not an absolute http(s) URL"),
            ("ftp://bao.test.example", "not an absolute http(s) URL"),
        ])
    func addressRules(raw: String, expected: String) {
        do {
            _ = try Self.address(option: raw, [:])
            Issue.record("\(raw) was taken")
        } catch {
            #expect(error.description.contains(expected), "\(error)")
            #expect(error.category == .usage)
        }
    }

    @Test(
        "roles and auth mounts are OpenBao names: nothing that would change the request's path",
        arguments: [
            ("team", true), ("team-a.prod_1", true), ("_x", true), ("", false), ("../sys", false), (".hidden", false),
            ("team-", false), ("a b", false), ("a%2f", false), ("rôle", false),
        ])
    func names(name: String, accepted: Bool) {
        #expect(((try? OpenBaoNames.checkRole(name)) != nil) == accepted, "role \(name)")
        #expect(((try? OpenBaoNames.checkMount(name, option: "--auth-mount")) != nil) == accepted, "mount \(name)")
    }

    @Test("a mount may have several segments, each an OpenBao name; a role is one")
    func mountSegments() throws {
        try OpenBaoNames.checkMount("team/oidc", option: "--auth-mount")
        #expect(throws: OpenBaoNameError.self, "a role is one name") { try OpenBaoNames.checkRole("team/oidc") }
        for mount in ["team//oidc", "/jwt", "jwt/", "team/../sys", "team/./jwt"] {
            #expect(throws: OpenBaoNameError.self, "\(mount)") { try OpenBaoNames.checkMount(mount, option: "--auth-mount") }
        }
    }
}
