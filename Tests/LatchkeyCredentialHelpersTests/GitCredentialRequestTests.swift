import Testing

@testable import LatchkeyCredentialHelpers
@testable import LatchkeyProviders
@testable import LatchkeyVault

@Suite("git credential requests (git-credential(1))")
struct GitCredentialRequestTests {
    @Test("attributes are read up to the blank line; what follows it is not part of the request")
    func readsUpToBlankLine() throws {
        let request = try GitCredentialRequest(parsing: "protocol=https\nhost=gitlab.example.com\nusername=alice\n\nhost=evil.example\n")
        #expect(request == GitCredentialRequest(scheme: "https", host: "gitlab.example.com", username: "alice"))
    }

    @Test("input that ends without a blank line is a whole request")
    func readsToEndOfInput() throws {
        let request = try GitCredentialRequest(parsing: "protocol=https\nhost=git.example.com:8443\npath=group/repo.git")
        #expect(request == GitCredentialRequest(scheme: "https", host: "git.example.com:8443", path: "group/repo.git"))
    }

    @Test("attributes a helper does not know are ignored, and only the first '=' splits a line")
    func unknownAttributesAndEqualsInValues() throws {
        let request = try GitCredentialRequest(
            parsing: "capability[]=authtype\nwwwauth[]=Bearer realm=\"x\"\nprotocol=HTTPS\nhost=h.example\npath=a=b\n")
        #expect(request == GitCredentialRequest(scheme: "https", host: "h.example", path: "a=b"))
    }

    @Test("a url attribute is split into protocol, user, host with port, and path")
    func urlAttribute() throws {
        let request = try GitCredentialRequest(parsing: "url=https://al%40ice@Git.Example.com:8443/group/repo.git\n")
        #expect(request == GitCredentialRequest(scheme: "https", host: "Git.Example.com:8443", path: "group/repo.git", username: "al@ice"))
    }

    @Test("CRLF line ends are read like LF")
    func crlf() throws {
        let request = try GitCredentialRequest(parsing: "protocol=https\r\nhost=h.example\r\n\r\n")
        #expect(request == GitCredentialRequest(scheme: "https", host: "h.example"))
    }

    @Test("a line that is not key=value is refused with its line number", arguments: ["protocol", "=https", "host=a\0b"])
    func notAnAttribute(line: String) {
        #expect(throws: GitCredentialRequestError.notAnAttribute(line: 2)) {
            try GitCredentialRequest(parsing: "protocol=https\n\(line)\n")
        }
    }

    @Test("a url attribute without a scheme is refused")
    func badURL() {
        #expect(throws: GitCredentialRequestError.badURL(line: 1)) { try GitCredentialRequest(parsing: "url=gitlab.example.com/x\n") }
    }

    // MARK: - Which provider answers

    static func provider(_ name: String, hosts: [String]) -> Provider {
        let client = OAuthClient(
            issuer: "https://\(name).example", endpoints: .init(), clientID: "c", scopes: ["openid"], redirectPath: "/cb/\(name)",
            gitHosts: hosts.map { try! GitHost.parse($0).get() })
        return Provider(name: name, displayName: name, kind: .oidc(client), sourceFile: "/p/\(name).toml")
    }

    static let providers = [
        provider("gitlab", hosts: ["gitlab.example.com", "git.example.com:8443"]),
        provider("local", hosts: ["127.0.0.1:3000", "[::1]:3000"]),
        provider("other", hosts: []),
    ]

    @Test("the provider whose git_hosts names the host answers, whatever the host's case")
    func mappedHost() throws {
        let request = GitCredentialRequest(scheme: "https", host: "GitLab.Example.COM")
        #expect(try request.provider(in: Self.providers)?.name == "gitlab")
    }

    @Test("a port must match the entry's: with a port only its host:port entry, without a port only a bare entry")
    func ports() throws {
        #expect(try GitCredentialRequest(scheme: "https", host: "git.example.com:8443").provider(in: Self.providers)?.name == "gitlab")
        #expect(try GitCredentialRequest(scheme: "https", host: "git.example.com").provider(in: Self.providers) == nil)
        #expect(try GitCredentialRequest(scheme: "https", host: "gitlab.example.com:8443").provider(in: Self.providers) == nil)
    }

    @Test(
        "an unmapped host, a missing host or a protocol other than https gets no provider",
        arguments: [
            GitCredentialRequest(scheme: "https", host: "github.com"),
            GitCredentialRequest(scheme: "https"),
            GitCredentialRequest(scheme: "http", host: "gitlab.example.com"),
            GitCredentialRequest(scheme: "ssh", host: "gitlab.example.com"),
            GitCredentialRequest(host: "gitlab.example.com"),
            GitCredentialRequest(scheme: "https", host: "gitlab.example.com/evil"),
        ])
    func noAnswer(request: GitCredentialRequest) throws {
        #expect(try request.provider(in: Self.providers) == nil)
    }

    @Test("plain http is answered only for loopback hosts")
    func httpOnLoopback() throws {
        #expect(try GitCredentialRequest(scheme: "http", host: "127.0.0.1:3000").provider(in: Self.providers)?.name == "local")
        #expect(try GitCredentialRequest(scheme: "http", host: "[::1]:3000").provider(in: Self.providers)?.name == "local")
    }

    @Test("a host in two providers' git_hosts is refused, naming both")
    func ambiguousHost() {
        let providers = Self.providers + [Self.provider("mirror", hosts: ["GITLAB.example.com"])]
        #expect(throws: GitCredentialError.severalProviders(host: "gitlab.example.com", providers: ["gitlab", "mirror"])) {
            try GitCredentialRequest(scheme: "https", host: "gitlab.example.com").provider(in: providers)
        }
    }

    @Test("the answer is username and password lines, and the credential prints redacted")
    func answer() {
        let credential = GitCredential(username: "oauth2", password: Secret("fake-token"))
        #expect(credential.exposedAnswer == "username=oauth2\npassword=fake-token\n")
        #expect(!String(describing: credential).contains("fake-token"))
    }
}
