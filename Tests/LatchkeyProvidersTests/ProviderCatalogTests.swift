import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyProviders
@testable import LatchkeyVault

@Suite("The provider catalog (providers.d directories)")
struct ProviderCatalogTests {
    @Test("one broken file does not stop the others from loading")
    func brokenFileIsolated() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("alpha.toml", Provider.oidcFile("Alpha"))
        let broken = try directory.write(
            "broken.toml", "display_name = \"Broken\"\nkind = \"oidc\"\nissuer = \"http://insecure.example.com\"\n")
        try directory.write("gamma.toml", Provider.oidcFile("Gamma"))
        try directory.write("notes.txt", "not a provider")

        let catalog = ProviderCatalog.load(directories: [directory.path])
        #expect(catalog.providers.map(\.name) == ["alpha", "gamma"])
        #expect(catalog.errors.count == 1)
        #expect(catalog.errors.first?.file == broken)
        #expect(catalog.errors.first?.field == "issuer")
    }

    @Test("two providers with the same redirect_path are both rejected, each error naming the other file")
    func sharedRedirectPath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try directory.write("first.toml", Provider.oidcFile("First", redirectPath: "/oauth2redirect/shared"))
        let second = try directory.write("second.toml", Provider.oidcFile("Second", redirectPath: "/oauth2redirect/shared"))
        try directory.write("third.toml", Provider.oidcFile("Third"))

        let catalog = ProviderCatalog.load(directories: [directory.path])
        #expect(catalog.providers.map(\.name) == ["third"])
        let firstError = try #require(catalog.errors.first { $0.file == first })
        let secondError = try #require(catalog.errors.first { $0.file == second })
        #expect(catalog.errors.count == 2)
        #expect(firstError.field == "redirect_path")
        #expect(firstError.line == 4)
        #expect(firstError.message.contains(second))
        #expect(secondError.message.contains(first))
    }

    @Test("a default redirect path taken by another file's explicit one is a clash too")
    func defaultPathClash() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("google.toml", Provider.oidcFile("Google"))
        try directory.write("impostor.toml", Provider.oidcFile("Impostor", redirectPath: "/oauth2redirect/google"))

        let catalog = ProviderCatalog.load(directories: [directory.path])
        #expect(catalog.providers.isEmpty)
        #expect(Set(catalog.errors.map(\.field)) == ["redirect_path"])
    }

    @Test("for a name found in two directories the first directory wins")
    func firstDirectoryWins() throws {
        let user = try TemporaryDirectory()
        let system = try TemporaryDirectory()
        defer {
            user.remove()
            system.remove()
        }
        try user.write("corp.toml", Provider.oidcFile("UserCopy"))
        try system.write("corp.toml", Provider.oidcFile("SystemCopy"))
        try system.write("other.toml", Provider.oidcFile("Other"))

        let catalog = ProviderCatalog.load(directories: [user.path, system.path])
        #expect(catalog.errors == [])
        #expect(catalog.providers.map(\.name) == ["corp", "other"])
        #expect(catalog.providers.first?.displayName == "UserCopy")
        #expect(catalog.providers.first?.sourceFile == user.path + "/corp.toml")
    }

    @Test("LATCHKEY_PROVIDERS_DIR alone is searched when it is set")
    func explicitDirectory() {
        let environment = ["LATCHKEY_PROVIDERS_DIR": "/srv/providers", "HOME": "/home/alice", "XDG_CONFIG_HOME": "/home/alice/.cfg"]
        #expect(ProviderCatalog.searchDirectories(environment: environment) == ["/srv/providers"])
    }

    @Test("without LATCHKEY_PROVIDERS_DIR the XDG config directory comes before /etc")
    func defaultDirectories() {
        #expect(
            ProviderCatalog.searchDirectories(environment: ["HOME": "/home/alice", "XDG_CONFIG_HOME": "/home/alice/.cfg"])
                == ["/home/alice/.cfg/latchkey/providers.d", "/etc/latchkey/providers.d"])
        #expect(
            ProviderCatalog.searchDirectories(environment: ["HOME": "/home/alice", "LATCHKEY_PROVIDERS_DIR": ""])
                == ["/home/alice/.config/latchkey/providers.d", "/etc/latchkey/providers.d"])
        // A relative XDG_CONFIG_HOME is invalid per the XDG spec and ignored.
        #expect(
            ProviderCatalog.searchDirectories(environment: ["HOME": "/home/alice", "XDG_CONFIG_HOME": "relative"]).first
                == "/home/alice/.config/latchkey/providers.d")
    }

    @Test("an unreadable LATCHKEY_PROVIDERS_DIR is an error, a missing default directory is not")
    func missingDirectory() {
        let missing = NSTemporaryDirectory() + "latchkey-tests-missing-" + UUID().uuidString
        #expect(ProviderCatalog.load(directories: [missing]).errors == [])
        let strict = ProviderCatalog.load(directories: [missing], explicitDirectoryRequired: true)
        #expect(strict.errors.map(\.file) == [missing])
    }

    @Test("looking up a provider tells an unknown name from a broken file")
    func lookup() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("good.toml", Provider.oidcFile("Good"))
        try directory.write("bad.toml", "display_name = \"Bad\"\nkind = \"saml\"\nissuer = \"https://idp.example.com\"\n")
        let catalog = ProviderCatalog.load(directories: [directory.path])

        #expect(try catalog.provider(named: "good").displayName == "Good")
        #expect(throws: ProviderLookupError.unknown(name: "nope", known: ["good"])) { try catalog.provider(named: "nope") }
        do {
            _ = try catalog.provider(named: "bad")
            Issue.record("a broken provider was returned")
        } catch {
            guard case .broken(let name, let errors) = error else {
                Issue.record("expected .broken, got \(error)")
                return
            }
            #expect(name == "bad")
            #expect(errors.map(\.field) == ["kind"])
            #expect(error.category == .configuration)
        }
    }

    @Test("looking up a provider whose redirect path clashes reports it as broken")
    func lookupClash() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("one.toml", Provider.oidcFile("One", redirectPath: "/cb"))
        try directory.write("two.toml", Provider.oidcFile("Two", redirectPath: "/cb"))
        let catalog = ProviderCatalog.load(directories: [directory.path])
        #expect(catalog.providers.isEmpty)
        #expect {
            try catalog.provider(named: "two")
        } throws: { error in
            guard case .broken = error as? ProviderLookupError else { return false }
            return true
        }
    }
}
