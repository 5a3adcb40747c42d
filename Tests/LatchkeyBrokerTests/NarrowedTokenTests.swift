import Foundation
import LatchkeyBrokerWire
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyBroker
@testable import LatchkeyCredentialHelpers
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// `latchkey token --resource/--scope` (RFC 8707, RFC 6749 §6): narrower tokens from the
/// account's refresh token, against the in-memory server, which rotates refresh tokens and
/// accepts only the one it issued last.
@Suite("Narrower tokens per call")
struct NarrowedTokenTests {
    static let api = "https://api.example/v1/"

    func signedIn(_ server: FakeAuthorizationServer) async throws -> (AccountService, InMemoryKeystore) {
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore)
        _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        return (service, keystore)
    }

    @Test("a resource token comes from the refresh grant with resource and scope, is kept, and the next call is answered from the vault")
    func keptAndReused() async throws {
        let server = FakeAuthorizationServer()
        let (service, keystore) = try await signedIn(server)
        let before = try #require(try await keystore.records().first)
        let narrowing = TokenNarrowing(resource: Self.api, scopes: ["email"])
        let token = try await service.narrowedToken(for: AccountSelector(provider: "corp"), narrowing, minimumLifetime: 60)
        let request = try #require(server.transport.sent(to: "/token").last)
        #expect(request.form["grant_type"] == "refresh_token" && request.form["resource"] == Self.api && request.form["scope"] == "email")
        #expect(token.accessToken != before.accessToken && token.resource == Self.api && token.scopes == ["email"])

        let after = try #require(try await keystore.records().first)
        #expect(after.accessToken == before.accessToken, "the account's own token stays")
        #expect(after.refreshToken?.exposedValue == server.currentRefreshToken, "the rotated refresh token is kept")
        #expect(after.narrowedTokens?.map(\.resource) == [Self.api])

        let sent = server.transport.sent(to: "/token").count
        #expect(try await service.narrowedToken(for: AccountSelector(provider: "corp"), narrowing, minimumLifetime: 60) == token)
        #expect(server.transport.sent(to: "/token").count == sent, "answered from the vault")
        // The account still refreshes with the rotated refresh token.
        _ = try await service.refresh(AccountSelector(provider: "corp"))
    }

    /// Signed in at a provider mapping `git.corp.example` whose `git_resource` is `api`.
    func signedInForGit(_ server: FakeAuthorizationServer) async throws -> (LocalBroker, InMemoryKeystore, GitRequest) {
        var provider = server.provider
        guard case .oidc(var client) = provider.kind else { throw CancellationError() }
        client.gitHosts = [GitHost(host: "git.corp.example")]
        provider.kind = .oidc(client)
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore, providers: [provider])
        _ = try await service.signIn(provider: provider, interaction: ScriptedPerson { _, _ in .cancel })
        return (LocalBroker.atCommand(service), keystore, GitRequest(attributes: "protocol=https\nhost=git.corp.example"))
    }

    /// The password of git's answer (`password=…`).
    static func password(_ release: GitRelease) throws -> Secret {
        let answer = try #require(release.credential).exposedValue
        let line = try #require(answer.split(separator: "\n").first { $0.hasPrefix("password=") })
        return Secret(String(line.dropFirst("password=".count)))
    }

    static var gitResourceChoices: ProtocolChoices {
        var choices = ProtocolChoices()
        choices.gitResource = api
        return choices
    }

    @Test("git-credential hands git the token narrowed to git_resource, not the account's, and the next get is answered from the vault")
    func gitResource() async throws {
        let server = FakeAuthorizationServer(choices: Self.gitResourceChoices)
        let (broker, keystore, request) = try await signedInForGit(server)
        let own = try #require(try await keystore.records().first).accessToken
        let credential = try Self.password(try await broker.gitCredential(request))
        let sent = try #require(server.transport.sent(to: "/token").last)
        #expect(sent.form["grant_type"] == "refresh_token" && sent.form["resource"] == Self.api)
        #expect(credential != own)
        #expect(try await keystore.records().first?.narrowedTokens?.first?.accessToken == credential)
        let count = server.transport.sent(to: "/token").count
        #expect(try Self.password(try await broker.gitCredential(request)) == credential)
        #expect(server.transport.sent(to: "/token").count == count)
    }

    @Test("git-credential --resource replaces git_resource, and --scope alone narrows the token for git_resource")
    func gitCredentialOptionsWin() async throws {
        let server = FakeAuthorizationServer(choices: Self.gitResourceChoices)
        let (broker, keystore, request) = try await signedInForGit(server)
        let other = "https://other.example/"
        var asked = request
        asked.resource = other
        let credential = try Self.password(try await broker.gitCredential(asked))
        let sent = try #require(server.transport.sent(to: "/token").last)
        #expect(sent.form["resource"] == other && sent.form["scope"] == nil)
        asked = request
        asked.scope = "email"
        let scoped = try Self.password(try await broker.gitCredential(asked))
        let second = try #require(server.transport.sent(to: "/token").last)
        #expect(second.form["resource"] == Self.api && second.form["scope"] == "email")
        let kept = try #require(try await keystore.records().first?.narrowedTokens)
        #expect(kept.map(\.resource) == [other, Self.api] && kept.map(\.accessToken) == [credential, scoped])
    }

    @Test("an expired narrowed token is replaced, not added to, and other resources keep their own")
    func replacedWhenExpired() async throws {
        let server = FakeAuthorizationServer()
        let (service, keystore) = try await signedIn(server)
        let selector = AccountSelector(provider: "corp")
        let first = try await service.narrowedToken(for: selector, TokenNarrowing(resource: Self.api, scopes: []), minimumLifetime: 60)
        _ = try await service.narrowedToken(
            for: selector, TokenNarrowing(resource: "https://other.example/", scopes: []), minimumLifetime: 60)
        server.clock.advance(by: 7200)
        let second = try await service.narrowedToken(for: selector, TokenNarrowing(resource: Self.api, scopes: []), minimumLifetime: 60)
        #expect(second != first)
        let kept = try #require(try await keystore.records().first?.narrowedTokens)
        #expect(kept.map(\.resource) == ["https://other.example/", Self.api])
    }

    @Test("an account keeps at most 16 narrowed tokens however many resources are asked for, the latest among them")
    func keptTokensAreCapped() async throws {
        let server = FakeAuthorizationServer()
        let (service, keystore) = try await signedIn(server)
        let selector = AccountSelector(provider: "corp")
        let resources = (0..<40).map { "https://api\($0).example/" + String(repeating: "x", count: 1900) }
        for resource in resources {
            server.clock.advance(by: 1)
            _ = try await service.narrowedToken(for: selector, TokenNarrowing(resource: resource, scopes: []), minimumLifetime: 60)
        }
        let kept = try #require(try await keystore.records().first?.narrowedTokens)
        #expect(kept.count == NarrowedToken.keptPerAccount)
        #expect(Set(kept.compactMap(\.resource)) == Set(resources.suffix(NarrowedToken.keptPerAccount)), "the least recently used went")
    }

    @Test("past the cap an expired token goes first, then the least recently used; the new one always stays")
    func whichTokensGo() {
        let start = Date(timeIntervalSince1970: 1_750_000_000)
        let now = start.addingTimeInterval(1000)
        var kept = (0..<NarrowedToken.keptPerAccount).map { index in
            NarrowedToken(
                resource: "https://api\(index).example/", scopes: [], accessToken: Secret("t\(index)"), tokenType: "Bearer",
                expiresAt: start.addingTimeInterval(index == 5 ? 100 : 10_000), issuedAt: start.addingTimeInterval(Double(index)))
        }
        kept[0].lastUsedAt = now.addingTimeInterval(-1)
        func new(_ name: String) -> NarrowedToken {
            NarrowedToken(
                resource: "https://\(name).example/", scopes: [], accessToken: Secret(name), tokenType: "Bearer",
                expiresAt: now.addingTimeInterval(3600), issuedAt: now)
        }
        let once = NarrowedToken.keeping(new("first"), among: kept, now: now)
        #expect(once.count == NarrowedToken.keptPerAccount && once.last == new("first"))
        #expect(!once.contains { $0.resource == "https://api5.example/" }, "the expired one went")
        let twice = NarrowedToken.keeping(new("second"), among: once, now: now)
        #expect(!twice.contains { $0.resource == "https://api1.example/" }, "then the least recently used")
        #expect(twice.contains { $0.resource == "https://api0.example/" }, "issued first, but used since")
        let again = NarrowedToken.keeping(new("second"), among: twice, now: now)
        #expect(again.filter { $0.resource == "https://second.example/" }.count == 1, "one token per narrowing")
    }

    @Test("a kept token the vault answers with an hour after its last use has the use written, and not more often")
    func useRecorded() async throws {
        let server = FakeAuthorizationServer()
        server.accessTokenLifetime(86_400)
        let (service, keystore) = try await signedIn(server)
        let selector = AccountSelector(provider: "corp")
        let narrowing = TokenNarrowing(resource: Self.api, scopes: [])
        _ = try await service.narrowedToken(for: selector, narrowing, minimumLifetime: 60)
        server.clock.advance(by: 600)
        _ = try await service.narrowedToken(for: selector, narrowing, minimumLifetime: 60)
        #expect(try await keystore.records().first?.narrowedTokens?.first?.lastUsedAt == nil, "within the hour: nothing written")
        server.clock.advance(by: 3600)
        _ = try await service.narrowedToken(for: selector, narrowing, minimumLifetime: 60)
        #expect(try await keystore.records().first?.narrowedTokens?.first?.lastUsedAt == server.clock.now())
    }

    @Test("a resource over 2 KiB, or not an absolute URI, is refused before the provider is asked or anything is kept")
    func resourceBounded() async throws {
        let server = FakeAuthorizationServer()
        let (service, keystore) = try await signedIn(server)
        let before = try await keystore.records()
        let sent = server.transport.sent(to: "/token").count
        for resource in ["https://api.example/" + String(repeating: "x", count: 2030), "not-a-uri", "https://api.example/#part"] {
            await #expect(throws: NarrowingError.self) {
                try await service.narrowedToken(
                    for: AccountSelector(provider: "corp"), TokenNarrowing(resource: resource, scopes: []), minimumLifetime: 60)
            }
        }
        #expect(ResourceIndicator.problem("https://api.example/" + String(repeating: "x", count: 2028)) == nil, "2048 bytes pass")
        #expect(server.transport.sent(to: "/token").count == sent)
        #expect(try await keystore.records() == before)
    }

    @Test("a scope the account was not granted is refused before anything is sent")
    func widerScopeRefused() async throws {
        let server = FakeAuthorizationServer()
        let (service, _) = try await signedIn(server)
        let sent = server.transport.sent(to: "/token").count
        await #expect(throws: NarrowingError.scopesNotGranted(["admin"], account: "alice@example.com", provider: "corp")) {
            try await service.narrowedToken(
                for: AccountSelector(provider: "corp"), TokenNarrowing(resource: nil, scopes: ["email", "admin"]), minimumLifetime: 60)
        }
        #expect(server.transport.sent(to: "/token").count == sent)
    }

    @Test("a resource the sign-in did not name is got by signing the same account in again naming it, last, with its login hint")
    func signInAgainForResource() async throws {
        var choices = ProtocolChoices()
        choices.resources = [Self.api, "https://listed.example/"]
        let server = FakeAuthorizationServer(choices: choices)
        server.acceptOnlySignedInResources()
        let (service, keystore) = try await signedIn(server)
        let before = try #require(try await keystore.records().first)
        let (token, _, _) = try await service.accessToken(
            of: before, narrowing: TokenNarrowing(resource: Self.api, scopes: []), minimumLifetime: 60,
            signingInWith: ScriptedPerson { _, _ in .cancel })
        #expect(server.browser.urls.count == 2, "signed in again")
        let url = try #require(server.browser.urls.last)
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.filter { $0.name == "resource" }.map(\.value) == ["https://listed.example/", Self.api])
        #expect(query.first { $0.name == "login_hint" }?.value == (before.displayName ?? before.subject))
        let records = try await keystore.records()
        #expect(records.count == 1 && records.first?.subject == before.subject)
        #expect(records.first?.narrowedTokens?.map(\.accessToken) == [token] && records.first?.narrowedTokens?.first?.resource == Self.api)
    }

    @Test("with nobody to sign in, a resource the sign-in did not name fails naming the login command for it, and nothing changes")
    func resourceNotSignedInWithoutPerson() async throws {
        let server = FakeAuthorizationServer()
        server.acceptOnlySignedInResources()
        let (service, keystore) = try await signedIn(server)
        let before = try await keystore.records()
        let expected = NarrowingError.resourceNotSignedIn(Self.api, account: "alice@example.com", provider: "corp")
        await #expect(throws: expected) {
            try await service.accessToken(
                of: try #require(before.first), narrowing: TokenNarrowing(resource: Self.api, scopes: []), minimumLifetime: 60,
                signingInWith: nil)
        }
        #expect(expected.description.contains("`latchkey login corp:alice@example.com --resource https://api.example/v1/`"))
        #expect(try await keystore.records() == before)
        #expect(server.browser.urls.count == 1)
    }

    @Test("the provider file's resources go with the authorization request, pushed or in the URL")
    func resourcesAtSignIn() async throws {
        var choices = ProtocolChoices()
        choices.resources = [Self.api, "https://other.example/"]
        let server = FakeAuthorizationServer(choices: choices)
        _ = try await signedIn(server)
        let url = try #require(server.browser.urls.first)
        let resources = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.filter { $0.name == "resource" }.map(\.value)
        #expect(resources == [Self.api, "https://other.example/"])
    }

    @Test("a DPoP-bound account proves its key when it asks for a narrower token")
    func boundAccount() async throws {
        let server = FakeAuthorizationServer(discovery: FakeAuthorizationServer.advertisesES256)
        let (service, _) = try await signedIn(server)
        _ = try await service.narrowedToken(
            for: AccountSelector(provider: "corp"), TokenNarrowing(resource: Self.api, scopes: []), minimumLifetime: 60)
        #expect(server.transport.sent(to: "/token").last?.header("DPoP") != nil)
    }

    @Test("a resource must be an absolute URI without a fragment", arguments: ["api", "https://api.example/#x", "a b"])
    func badResource(_ text: String) {
        #expect(ResourceIndicator.problem(text) != nil)
        #expect(ResourceIndicator.problem(Self.api) == nil)
    }
}
