import Foundation
import LatchkeyLauncher
import Testing

@testable import LatchkeyBrokerWire
@testable import LatchkeyCredentialHelpers
@testable import LatchkeyProviders
@testable import LatchkeyVault

/// The Docker credential-helper protocol (docs/kubernetes-and-registries.md, "Container
/// registries"), pinned against docker-credential-helpers' `credentials` package: actions,
/// request bodies, and the `get` answer's members.
@Suite("container credential helper: requests and answers")
struct CredentialHelperRequestTests {
    func request(_ action: String, _ input: String) throws -> CredentialHelperRequest {
        try CredentialHelperRequest(action: action, input: Array(input.utf8))
    }

    func server(_ text: String) throws -> RegistryServerURL { try RegistryServerURL(parsing: text) }

    func provider(_ name: String, registries: [String], username: String = OAuthClient.defaultRegistryUsername) -> Provider {
        let client = OAuthClient(
            issuer: "https://\(name).example", endpoints: .init(), clientID: "c", scopes: ["openid"], redirectPath: "/cb/\(name)",
            registryHosts: registries.map { try! GitHost.parse($0).get() }, registryUsername: username)
        return Provider(name: name, displayName: name, kind: .oidc(client), sourceFile: "/p/\(name).toml")
    }

    @Test("get and erase read a server URL with or without a newline; list reads nothing")
    func actions() throws {
        #expect(try request("get", "registry.example.com") == .get(try server("registry.example.com")))
        #expect(try request("get", "registry.example.com\n") == .get(try server("registry.example.com")))
        #expect(try request("erase", "localhost:5000\n") == .erase(try server("localhost:5000")))
        #expect(try request("list", "") == .list)
    }

    @Test(
        "server URLs name the registry by host[:port], with or without a scheme and path",
        arguments: [
            ("registry.example.com", "registry.example.com", nil),
            ("Registry.Example.com:5000", "registry.example.com:5000", nil),
            ("https://index.docker.io/v1/", "index.docker.io", "https"),
            ("http://127.0.0.1:5000", "127.0.0.1:5000", "http"),
            ("https://[::1]:5000/v2/", "[::1]:5000", "https"),
        ] as [(String, String, String?)])
    func serverURLs(text: String, host: String, scheme: String?) throws {
        let parsed = try server(text)
        #expect(parsed.host.description == host)
        #expect(parsed.scheme == scheme)
        #expect(parsed.text == text, "get answers with the server URL as it was sent")
    }

    @Test(
        "what is not a server URL is refused, naming it",
        arguments: ["", "ftp://registry.example.com", "alice@registry.example.com", "registry.example.com:0", "a b", "https://"])
    func notServerURLs(text: String) {
        #expect(throws: CredentialHelperError.notAServerURL(text)) { try RegistryServerURL(parsing: text) }
    }

    @Test("store reads only ServerURL from docker login's object, and refuses what is not one")
    func store() throws {
        #expect(
            try request("store", #"{"ServerURL":"registry.example.com","Username":"alice","Secret":"fake-password"}"#)
                == .store(try server("registry.example.com")))
        #expect(throws: CredentialHelperError.storeNotJSON) { try request("store", "registry.example.com") }
        #expect(throws: CredentialHelperError.storeNotJSON) { try request("store", #"{"Username":"alice"}"#) }
    }

    @Test("an unknown action, input that is not UTF-8, or too much input is refused")
    func refused() {
        #expect(throws: CredentialHelperError.unknownAction("version")) { try request("version", "") }
        #expect(throws: CredentialHelperError.notUTF8) { try CredentialHelperRequest(action: "get", input: [0xFF, 0xFE]) }
        #expect(throws: CredentialHelperError.tooLarge) {
            try CredentialHelperRequest(action: "get", input: Array(repeating: 0x61, count: CredentialHelperRequest.inputLimit + 1))
        }
        #expect(CredentialHelperError.unknownAction("version").description.contains("get, list, store, erase"))
    }

    @Test("a mapped host is answered by its provider; an unmapped one, or plain http beyond loopback, by none")
    func matching() throws {
        let providers = [
            provider("gcp", registries: ["europe-docker.pkg.dev"]), provider("local", registries: ["localhost:5000", "registry.test"]),
        ]
        #expect(try server("https://europe-docker.pkg.dev").provider(in: providers)?.name == "gcp")
        #expect(try server("localhost:5000").provider(in: providers)?.name == "local")
        #expect(try server("http://localhost:5000").provider(in: providers)?.name == "local")
        #expect(try server("localhost").provider(in: providers) == nil, "the port is part of the host")
        #expect(try server("docker.io").provider(in: providers) == nil)
        #expect(try server("http://registry.test").provider(in: providers) == nil, "no token over plain http")
    }

    @Test("two providers listing one registry is a configuration error naming both")
    func severalProviders() throws {
        let providers = [provider("a", registries: ["registry.test"]), provider("b", registries: ["Registry.test"])]
        #expect(throws: RegistryCredentialError.severalProviders(host: "registry.test", providers: ["a", "b"])) {
            try server("registry.test").provider(in: providers)
        }
    }

    @Test("list names every mapped host with the user name get gives")
    func listing() {
        let providers = [
            provider("a", registries: ["registry.test", "localhost:5000"]), provider("b", registries: ["r.test"], username: "<token>"),
        ]
        #expect(
            RegistryCredential.listing(of: providers) == [
                "registry.test": "oauth2accesstoken", "localhost:5000": "oauth2accesstoken", "r.test": "<token>",
            ])
    }

    @Test("get's answer is exactly ServerURL, Username and Secret")
    func answerShape() throws {
        let credential = RegistryCredential(
            serverURL: "https://registry.test/v2/", username: "<token>", secret: Secret("fake-access-token"))
        let text = try ReportJSON.text(of: credential)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
        #expect(object == ["ServerURL": "https://registry.test/v2/", "Username": "<token>", "Secret": "fake-access-token"])
        #expect(RegistryCredential.notFoundMessage == "credentials not found in native keychain")
    }
}
