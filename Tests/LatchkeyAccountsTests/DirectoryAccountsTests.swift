import Foundation
import LatchkeyLauncher
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyBrokerWire
@testable import LatchkeyProviders
@testable import LatchkeyVault

@Suite("Per-directory accounts ([directories] in config.toml)")
struct DirectoryAccountsTests {
    let accounts = DirectoryAccounts([
        .init(written: "~/work", path: "/home/a/work", accounts: ["github": "alice@work.example"]),
        .init(written: "~/work/acme", path: "/home/a/work/acme", accounts: ["github": "alice@acme.example", "google": "a@acme.example"]),
    ])

    @Test("the longest matching directory wins, compared by whole path components")
    func longestPrefix() {
        #expect(accounts.mapping(for: "github", in: "/home/a/work/acme/src")?.written == "~/work/acme")
        #expect(accounts.mapping(for: "github", in: "/home/a/work/acme")?.written == "~/work/acme")
        #expect(accounts.mapping(for: "github", in: "/home/a/work/acme2")?.written == "~/work")
        #expect(accounts.mapping(for: "github", in: "/home/a/workshop") == nil)
        #expect(accounts.mapping(for: "google", in: "/home/a/work/other") == nil, "only mappings naming the provider count")
    }

    @Test("a bare provider takes the mapped account; an explicit PROVIDER:ACCOUNT is left as it is")
    func applying() {
        let here = "/home/a/work/acme/src"
        #expect(
            accounts.applying(to: AccountSelector(provider: "github"), in: here)
                == AccountSelector(provider: "github", account: "alice@acme.example"))
        #expect(
            accounts.applying(to: AccountSelector(parsing: "github:me@home.example"), in: here)
                == AccountSelector(parsing: "github:me@home.example"))
        #expect(accounts.applying(to: AccountSelector(provider: "gitlab"), in: here) == AccountSelector(provider: "gitlab"))
    }

    @Test("the launcher's copy reads back the same mappings; a field with a tab makes it incomplete and is left out")
    func launcherCopy() {
        let copy = accounts.launcherCopy
        #expect(copy.isComplete)
        let read = DirectoryAccounts(launcherCopy: copy.text)
        #expect(
            read.applying(to: AccountSelector(provider: "github"), in: "/home/a/work/acme")
                == AccountSelector(provider: "github", account: "alice@acme.example"))
        #expect(
            read.applying(to: AccountSelector(provider: "github"), in: "/home/a/work/x")
                == AccountSelector(provider: "github", account: "alice@work.example"))
        let tabbed = DirectoryAccounts([.init(written: "/t", path: "/t\tx", accounts: ["github": "a"])]).launcherCopy
        #expect(!tabbed.isComplete && tabbed.text.isEmpty)
    }

    @Test("the launcher's lookup in the copy's bytes answers as applying(to:in:) does, for every directory and provider")
    func launcherLookupAgrees() {
        let wide = DirectoryAccounts(
            accounts.mappings + [
                .init(written: "/", path: "/", accounts: ["gitlab": "root@everywhere.example"]),
                .init(written: "~/work/acme/deep", path: "/home/a/work/acme/deep", accounts: ["gitlab": "deep@acme.example"]),
            ])
        let lines = Array(wide.launcherCopy.text.utf8)
        let directories = [
            "/", "/home", "/home/a/work", "/home/a/work/", "/home/a/work/acme", "/home/a/work/acme2", "/home/a/work/acme/deep/er",
            "/home/a/workshop", "/home/a/work/acme/deepest",
        ]
        for directory in directories {
            for provider in ["github", "google", "gitlab", "git", "githubx", ""] {
                let expected = wide.applying(to: AccountSelector(provider: provider), in: directory).account
                #expect(
                    DirectoryAccounts.account(for: provider, in: directory, launcherCopy: lines) == expected,
                    "\(provider) in \(directory)")
            }
        }
    }

    @Test("a copy longer than the first keyring buffer the launcher used (256 bytes) is read whole")
    func longCopyReadWhole() throws {
        let many = DirectoryAccounts(
            (0..<40).map {
                .init(written: "/srv/project-\($0)", path: "/srv/project-\($0)", accounts: ["github": "user-\($0)@example.com"])
            })
        let description = "latchkey:test:directories:\(UUID().uuidString)"
        let payload = try #require(DirectoryAccountsCopy.payload(many, identity: "1:2:3"))
        #expect(payload.count > 1000)
        try KernelKeyring.store(payload, description: description, timeout: 30)
        defer { KernelKeyring.remove(description: description) }
        #expect(KernelKeyring.read(description: description) == payload)
    }

    @Test("config.toml: ~ is expanded, symlinks are resolved, and each table keeps its line")
    func parsing() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try FileManager.default.createDirectory(atPath: root.path + "/real/acme", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.path + "/work", withDestinationPath: root.path + "/real")
        let file = try root.write(
            "config.toml",
            """
            keystore = "vault"

            [directories."~/work/acme"]
            github = "alice@acme.example"

            [directories."/srv/personal"]
            github = "me@home.example"
            """)
        let configuration = try LatchkeyConfiguration.load(path: file, environment: ["HOME": root.path])
        let mappings = configuration.directories.mappings
        let resolvedRoot = try #require(realpath(root.path, nil).map { String(cString: $0) })
        #expect(mappings.map(\.path) == [resolvedRoot + "/real/acme", "/srv/personal"])
        #expect(mappings.map(\.line) == [3, 6])
        #expect(mappings.first?.accounts == ["github": "alice@acme.example"])
    }

    @Test("a relative directory, a mapping that is not a table and a non-string account are errors on their lines")
    func parsingErrors() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let file = try root.write(
            "config.toml",
            """
            [directories."work"]
            github = "a"

            [directories."/srv"]
            github = 3
            """)
        #expect(throws: ProviderFileErrors.self) { try LatchkeyConfiguration.load(path: file, environment: ["HOME": "/home/a"]) }
        do {
            _ = try LatchkeyConfiguration.load(path: file, environment: ["HOME": "/home/a"])
        } catch {
            #expect(error.errors.map(\.line) == [1, 4])
            #expect(error.errors.first?.message.contains("absolute path") == true)
        }
    }

    @Test("a mapped account that is not signed in is said, with config.toml's line, and the provider answers as if unmapped")
    func staleMapping() {
        let warnings = WarningLog()
        let here = WorkingDirectory(
            path: "/home/a/work/acme", accounts: accounts, configFile: "/home/a/.config/latchkey/config.toml",
            warn: { warnings.append($0) })
        let bob = AccountRecord.testing(provider: "github", subject: "1", displayName: "bob@home.example")
        #expect(here.selector(AccountSelector(provider: "github"), among: [bob]) == AccountSelector(provider: "github"))
        #expect(warnings.lines.count == 1 && warnings.lines[0].contains("alice@acme.example") && warnings.lines[0].contains("config.toml"))
        let alice = AccountRecord.testing(provider: "github", subject: "2", displayName: "alice@acme.example")
        #expect(
            here.selector(AccountSelector(provider: "github"), among: [bob, alice])
                == AccountSelector(provider: "github", account: "alice@acme.example"))
    }

    @Test("status marks the account that applies here, and only when a mapping chose it")
    func statusMark() {
        let bob = AccountRecord.testing(provider: "github", subject: "1", displayName: "bob@home.example")
        let alice = AccountRecord.testing(provider: "github", subject: "2", displayName: "alice@acme.example")
        let report = StatusReport(records: [bob, alice], keystore: "vault", now: Date(), here: (accounts, "/home/a/work/acme"))
        #expect(report.accounts.map(\.appliesHere) == [false, true])
        #expect(report.accounts[1].summary.contains("(applies here)"))
        let elsewhere = StatusReport(records: [bob], keystore: "vault", now: Date(), here: (accounts, "/tmp"))
        #expect(elsewhere.accounts.map(\.appliesHere) == [false])
    }
}

/// Warnings a test collects.
final class WarningLog: Sendable {
    private let state = Mutex<[String]>([])
    var lines: [String] { state.withLock { $0 } }
    func append(_ line: String) { state.withLock { $0.append(line) } }
}

@Suite("Setting a directory's account in config.toml (the screen's m)")
struct DirectoryMappingEditTests {
    @Test("a new table goes at the end, an existing line is replaced, a new provider joins its table, and the rest is kept")
    func setting() {
        let original =
            "# my settings\nkeystore = \"vault\"\n\n[directories.\"/w\"]\ngithub = \"a@w\"\n# a comment\n\n[directories.\"/x\"]\ngithub = \"b\"\n"
        let added = DirectoryMappingEdit.setting("github", to: "me@home", in: "/home/me", text: original)
        #expect(added == original + "\n[directories.\"/home/me\"]\ngithub = \"me@home\"\n")
        let replaced = DirectoryMappingEdit.setting("github", to: "c@w", in: "/w", text: original)
        #expect(replaced == original.replacingOccurrences(of: "github = \"a@w\"", with: "github = \"c@w\""))
        let joined = DirectoryMappingEdit.setting("google", to: "g@w", in: "/w", text: original)
        #expect(joined.contains("[directories.\"/w\"]\ngoogle = \"g@w\"\ngithub = \"a@w\"\n# a comment"))
        #expect(DirectoryMappingEdit.setting("github", to: "a\"b", in: "/q", text: "") == "[directories.\"/q\"]\ngithub = \"a\\\"b\"\n")
    }

    @Test("the file is written only when it reads back, with its mode 0600; a broken config.toml is not made worse")
    func writing() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let configFile = root.path + "/config/latchkey/config.toml"
        try DirectoryMappingEdit.map("github", to: "alice@acme.example", in: "/work/acme", configFile: configFile, environment: [:])
        let configuration = try LatchkeyConfiguration.load(path: configFile)
        #expect(configuration.directories.mappings.first?.accounts == ["github": "alice@acme.example"])
        let mode = try FileManager.default.attributesOfItem(atPath: configFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let broken = try root.write("broken/config.toml", "keystore = 42\n")
        #expect(throws: (any Error).self) {
            try DirectoryMappingEdit.map("github", to: "alice", in: "/w", configFile: broken, environment: [:])
        }
        #expect(try String(contentsOfFile: broken, encoding: .utf8) == "keystore = 42\n")
    }
}
