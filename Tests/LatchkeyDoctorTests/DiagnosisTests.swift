import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyDoctor
@testable import LatchkeyKeystore
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("latchkey doctor's checks")
struct DiagnosisTests {
    /// Stand-ins for the system: everything works, and the terminal is a terminal.
    static let working = Diagnosis.Probes(
        kernelKeyring: { nil }, secretService: { _ in .holdsKey }, loopback: { _ in nil }, isTerminal: { true })

    /// An environment whose every directory is inside `root`, with a browser that resolves.
    static func environment(_ root: TemporaryDirectory, _ extra: [String: String] = [:]) -> [String: String] {
        [
            "HOME": root.path, "XDG_CONFIG_HOME": root.path + "/config", "XDG_DATA_HOME": root.path + "/data",
            "LATCHKEY_PROVIDERS_DIR": root.path + "/providers", "BROWSER": "/bin/true", "TERM": "xterm-256color",
            "PATH": "/usr/bin:/bin",
        ].merging(extra) { $1 }
    }

    /// A healthy set-up: one good provider, a private vault, valid config.toml.
    static func healthy() throws -> TemporaryDirectory {
        let root = try TemporaryDirectory()
        try root.write("providers/alpha.toml", Provider.oidcFile("Alpha"))
        try root.write("config/latchkey/config.toml", "keystore = \"vault\"\nunlock_timeout = 60\n")
        try root.write("data/latchkey/vault", "not decrypted by the doctor")
        return root
    }

    static func findings(_ root: TemporaryDirectory, _ extra: [String: String] = [:], probes: Diagnosis.Probes = working) async
        -> [Diagnosis.Finding]
    {
        await Diagnosis(environment: environment(root, extra), probes: probes).run()
    }

    @Test("a healthy set-up gives only ok lines, one per check, and no problem")
    func healthySetUp() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let findings = await Self.findings(root)
        #expect(findings.allSatisfy { $0.severity == .ok }, "\(findings.map(\.description))")
        #expect(Diagnosis.isHealthy(findings))
        let subjects = findings.map(\.subject)
        for subject in [
            "providers", "config.toml", "keystore", "vault permissions", "vault lock", "kernel keyring", "Secret Service", "IPv4 loopback",
            "IPv6 loopback", "HTTP client", "browser", "terminal",
        ] {
            #expect(subjects.contains(subject), "no \(subject) line")
        }
        #expect(findings.allSatisfy { !$0.description.contains("\n") })
    }

    @Test(
        "for each provider file and [accounts] table, what a forwarded host may ask: an AWS account's ID token held back, its roles listed")
    func forwardedHosts() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        try root.write(
            "providers/cloud.toml",
            Provider.oidcFile("Cloud")
                + "forward = true\naws_roles = [\"arn:aws:iam::123456789012:role/reader\"]\nresources = [\"https://api.example/\"]\n")
        try root.write(
            "config/latchkey/config.toml", "keystore = \"vault\"\n[accounts.\"alpha:ops@example.com\"]\nforward = true\n")
        let lines = await Self.findings(root).filter { $0.subject == "forwarded hosts" }.map(\.found)
        let cloud = try #require(lines.first { $0.hasPrefix("cloud: ") }, "\(lines)")
        #expect(cloud.contains("forward = true in its provider file"))
        #expect(cloud.contains("its access token or one narrowed to https://api.example/"))
        #expect(cloud.contains("never its ID token, which aws_roles take as the account"))
        #expect(cloud.contains("AWS credentials for arn:aws:iam::123456789012:role/reader only"))
        let alpha = try #require(lines.first { $0.hasPrefix("alpha: ") })
        #expect(alpha.contains("a forwarded host gets nothing"))
        let table = try #require(lines.first { $0.contains("[accounts.\"alpha:ops@example.com\"]") })
        #expect(table.contains("its access token; its ID token"))
    }

    @Test("with config.toml unreadable, forwarded hosts get nothing, and doctor says so")
    func forwardedHostsFailClosed() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        try root.write("config/latchkey/config.toml", "keystore = [\n")
        let lines = await Self.findings(root).filter { $0.subject == "forwarded hosts" }.map(\.found)
        #expect(lines == ["none get anything while config.toml has errors (fail closed)"])
    }

    @Test("an [accounts] table that forwards an account whose provider file does not load is a warning: nothing is forwarded")
    func forwardedAccountWithoutProviderFile() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        try root.write("providers/cloud.toml", "display_name = \"Cloud\"\nkind = \n")
        try root.write(
            "config/latchkey/config.toml", "keystore = \"vault\"\n[accounts.\"cloud:ops@example.com\"]\nforward = true\n")
        let findings = await Self.findings(root).filter { $0.subject == "forwarded hosts" }
        let table = try #require(findings.first { $0.found.contains("[accounts.\"cloud:ops@example.com\"]") }, "\(findings)")
        #expect(table.severity == .warning)
        #expect(table.found.contains("no provider file named cloud loads: a forwarded host gets none of its tokens"))
    }

    @Test("a broken provider file is a problem naming file:line and field, and the good ones still load")
    func brokenProviderFile() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let broken = try root.write(
            "providers/broken.toml", "display_name = \"Broken\"\nkind = \"oidc\"\nissuer = \"http://insecure.example.com\"\n")
        let findings = await Self.findings(root)
        let problem = try #require(findings.first { $0.severity == .problem })
        #expect(problem.subject == "provider file")
        #expect(problem.description.contains("\(broken):3: issuer:"))
        #expect(problem.fix?.contains("latchkey providers check") == true)
        #expect(findings.contains { $0.subject == "providers" && $0.severity == .ok && $0.found.contains("alpha") })
        #expect(!Diagnosis.isHealthy(findings))
    }

    @Test("a vault directory others can write is a problem whose fix is the chmod command")
    func vaultDirectoryWritableByOthers() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let directory = root.path + "/data/latchkey"
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
        let findings = await Self.findings(root)
        let problem = try #require(findings.first { $0.severity == .problem })
        #expect(problem.subject == "vault permissions")
        #expect(problem.found.contains("mode 777"))
        #expect(problem.fix == "chmod 700 \(directory)")
        #expect(problem.description.hasPrefix("problem vault permissions: "))
    }

    @Test("a vault file others can read is a problem whose fix is chmod 600")
    func vaultFileReadableByOthers() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let vault = root.path + "/data/latchkey/vault"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: vault)
        let problem = try #require(await Self.findings(root).first { $0.severity == .problem })
        #expect(problem.fix == "chmod 600 \(vault)")
    }

    @Test("an invalid config.toml is a problem naming the file and line, and no keystore is chosen")
    func invalidConfiguration() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let path = try root.write("config/latchkey/config.toml", "keystore = \"vault\"\nunlock_timeot = 60\n")
        let findings = await Self.findings(root)
        let problems = findings.filter { $0.severity == .problem }
        #expect(problems.map(\.subject) == ["config.toml", "keystore"])
        #expect(problems.first?.found.contains("\(path):2: unlock_timeot") == true)
    }

    @Test("a missing browser, a dumb terminal and no keyring are warnings: they do not fail the check")
    func warningsDoNotFail() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let probes = Diagnosis.Probes(
            kernelKeyring: { .unavailable("Operation not permitted") }, secretService: { _ in .holdsKey }, loopback: { _ in nil },
            isTerminal: { false })
        let findings = await Self.findings(root, ["BROWSER": "no-such-browser", "PATH": root.path, "TERM": "dumb"], probes: probes)
        let warnings = findings.filter { $0.severity == .warning }
        #expect(Set(warnings.map(\.subject)) == ["browser", "terminal", "kernel keyring"])
        #expect(warnings.first { $0.subject == "terminal" }?.found.contains("prints the status") == true)
        #expect(Diagnosis.isHealthy(findings))
    }

    @Test("a libcurl that cannot be loaded is a problem saying why and how to install it")
    func missingHTTPLibrary() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let probes = Diagnosis.Probes(
            kernelKeyring: { nil }, secretService: { _ in .holdsKey }, loopback: { _ in nil }, isTerminal: { true },
            httpLibrary: { .failure(.httpLibraryMissing("libcurl could not be loaded (libcurl.so.4: cannot open shared object file)")) })
        let findings = await Self.findings(root, probes: probes)
        let problem = try #require(findings.first { $0.subject == "HTTP client" })
        #expect(problem.severity == .problem)
        #expect(problem.description.contains("libcurl.so.4: cannot open shared object file"))
        #expect(problem.description.contains("apt-get install libcurl4"))
        #expect(!Diagnosis.isHealthy(findings))
    }

    @Test("over SSH the browser line says paste and device codes are used")
    func overSSH() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let findings = await Self.findings(root, ["SSH_CONNECTION": "192.0.2.1 50000 192.0.2.2 22"])
        let browser = try #require(findings.first { $0.subject == "browser" })
        #expect(browser.found.contains("--paste") && browser.found.contains("--device"))
    }

    @Test("IPv6 loopback failing is a problem only when a provider listens on [::1] or localhost")
    func ipv6Loopback() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let probes = Diagnosis.Probes(
            kernelKeyring: { nil }, secretService: { _ in .holdsKey },
            loopback: { host in host == .ipv6 ? .cannotBind("Cannot assign requested address") : nil }, isTerminal: { true })
        let warned = try #require(await Self.findings(root, probes: probes).first { $0.subject == "IPv6 loopback" })
        #expect(warned.severity == .warning)
        try root.write("providers/beta.toml", Provider.oidcFile("Beta") + "loopback_host = \"[::1]\"\n")
        let failed = try #require(await Self.findings(root, probes: probes).first { $0.subject == "IPv6 loopback" })
        #expect(failed.severity == .problem)
        #expect(failed.found.contains("beta"))
    }

    @Test("with the Secret Service chosen, an unreachable one is a problem; otherwise it says not chosen")
    func secretService() async throws {
        let root = try Self.healthy()
        defer { root.remove() }
        let notChosen = try #require(await Self.findings(root).first { $0.subject == "Secret Service" })
        #expect(notChosen.severity == .ok && notChosen.found.hasPrefix("not chosen"))
        let probes = Diagnosis.Probes(
            kernelKeyring: { nil }, secretService: { _ in .unusable("no D-Bus session") }, loopback: { _ in nil }, isTerminal: { true })
        let findings = await Diagnosis(environment: Self.environment(root), backend: .secretService, probes: probes).run()
        let problem = try #require(findings.first { $0.subject == "Secret Service" })
        #expect(problem.severity == .problem)
        #expect(findings.first { $0.subject == "keystore" }?.found.hasPrefix("secret-service") == true)
    }
}
