import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyProviders
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("Hooks in config.toml: the event on stdin, a deadline, an output cap, never a token")
struct HooksTests {
    let event = HookEvent(
        .reauthNeeded, provider: "github", account: "alice@example.test", time: Date(timeIntervalSince1970: 1_800_000_000),
        reason: "invalid_grant")

    /// Runs `script` (a shell script body) as the hook, with `timeout` seconds.
    func run(_ script: String, timeout: TimeInterval = 5, mode: Int = 0o700, in directory: TemporaryDirectory) throws -> (
        String?, TimeInterval
    ) {
        let path = try directory.write("hook", "#!/bin/sh\n" + script, mode: mode)
        let started = Date()
        let environment = [
            "PATH": "/usr/bin:/bin", "LATCHKEY_ACCESS_TOKEN": "at-secret", "LATCHKEY_ID_TOKEN": "id-secret", "HOME": directory.path,
        ]
        let hooks = Hooks(settings: HookSettings(), environment: environment, report: { _ in })
        let problem = Hooks.runBlocking(
            [path, "first argument"], event: event, environment: hooks.hookEnvironment(for: event), timeout: timeout)
        return (problem, Date().timeIntervalSince(started))
    }

    @Test("the hook reads the event as JSON on stdin and its fields in variables, and inherits no token")
    func eventOnStdin() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (problem, _) = try run(
            "cat > \"$HOME/stdin\"; env > \"$HOME/env\"; printf '%s' \"$1\" > \"$HOME/argument\"", in: directory)
        #expect(problem == nil)
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.path + "/stdin"))) as? [String: Any]
        #expect(json?["event"] as? String == "reauth_needed")
        #expect(json?["provider"] as? String == "github")
        #expect(json?["account"] as? String == "alice@example.test")
        #expect(json?["reason"] as? String == "invalid_grant")
        #expect(json?["time"] as? String == "2027-01-15T08:00:00Z")
        let environment = try String(contentsOfFile: directory.path + "/env", encoding: .utf8)
        #expect(environment.contains("LATCHKEY_EVENT=reauth_needed") && environment.contains("LATCHKEY_ACCOUNT=alice@example.test"))
        #expect(!environment.contains("secret"), "tokens from an outer latchkey exec are not passed on")
        #expect(try String(contentsOfFile: directory.path + "/argument", encoding: .utf8) == "first argument")
    }

    @Test("a hook that hangs is stopped at its deadline, grandchildren included")
    func hangs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (problem, seconds) = try run("sleep 30 & sleep 30", timeout: 1, in: directory)
        #expect(problem?.contains("did not finish within 1 s and was stopped") == true)
        #expect(seconds < 5)
    }

    @Test("a hook that floods its output is stopped at the cap")
    func floods() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (problem, seconds) = try run("yes flood", timeout: 20, in: directory)
        #expect(problem == "wrote more than 64 KiB and was stopped")
        #expect(seconds < 10)
    }

    @Test("a failing hook is reported with its status and what it said, sanitised")
    func fails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (problem, _) = try run("printf 'no display\\033[2J' >&2; exit 3", in: directory)
        #expect(problem == "exited with status 3 (it said: no display\\x1B[2J)")
    }

    @Test("a program that closes its input unread does not kill Latchkey with SIGPIPE")
    func closesItsInput() throws {
        // More input than a pipe holds, so the write is still going when the reader is gone.
        let outcome = try ChildProcess.run(
            path: "/bin/sh", arguments: ["-c", "exec 0<&-; sleep 0.2"], environment: ["PATH": "/usr/bin:/bin"],
            input: [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20), timeout: 10, outputLimit: 1024, stopAtNewline: false)
        #expect(outcome.status == 0)
    }

    @Test("an owner ends only its own children: the agent stopping does not kill a plugin a sign-in is waiting for")
    func ownersEndOnlyTheirChildren() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let agents = ChildProcessGroups()
        let others = ChildProcessGroups()
        let run = { @Sendable (owner: ChildProcessGroups, name: String) in
            try ChildProcess.run(
                path: "/bin/sh", arguments: ["-c", "touch \"$0\"; sleep 2", directory.path + "/" + name],
                environment: ["PATH": "/usr/bin:/bin"], input: [], timeout: 20, outputLimit: 1024, stopAtNewline: false, owner: owner)
        }
        async let hook = Self.onThread { try run(agents, "hook") }
        async let plugin = Self.onThread { try run(others, "plugin") }
        for _ in 0..<1000 where !["hook", "plugin"].allSatisfy({ FileManager.default.fileExists(atPath: directory.path + "/" + $0) }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        agents.endAll()
        let (hookOutcome, pluginOutcome) = try await (hook, plugin)
        #expect(hookOutcome.status == nil, "the agent's hook is killed with it")
        #expect(pluginOutcome.status == 0, "the other owner's child runs to its end")
    }

    /// Runs blocking work on a thread of its own, never on a cooperative one.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    @Test("a hook others can change is not run")
    func untrusted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (problem, _) = try run("touch \"$HOME/ran\"", mode: 0o777, in: directory)
        #expect(problem?.hasPrefix("was not run:") == true && problem?.contains("writable by other users") == true)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/ran"))
    }

    @Test("config.toml's [hooks] takes a path or an argument list, and says what is wrong with file and line")
    func configuration() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let good = try directory.write(
            "good.toml",
            "[hooks]\non_release = \"/usr/bin/logger\"\non_reauth_needed = [\"/usr/bin/notify-send\", \"Latchkey\"]\nexpiring_minutes = 5\ntimeout = 3\n"
        )
        let hooks = try LatchkeyConfiguration.load(path: good).hooks
        #expect(hooks.commands[.release] == ["/usr/bin/logger"])
        #expect(hooks.commands[.reauthNeeded] == ["/usr/bin/notify-send", "Latchkey"])
        #expect(hooks.expiringMinutes == 5 && hooks.timeout == 3)
        let bad = try directory.write("bad.toml", "[hooks]\non_signin = \"notify-send\"\non_relase = \"/bin/true\"\ntimeout = 0\n")
        #expect(throws: ProviderFileErrors.self) { try LatchkeyConfiguration.load(path: bad) }
        do {
            _ = try LatchkeyConfiguration.load(path: bad)
        } catch {
            let text = error.errors.map(\.description).joined(separator: "\n")
            #expect(text.contains("bad.toml:2: hooks.on_signin: must be an absolute program path"))
            #expect(text.contains("bad.toml:3: hooks.on_relase: unknown key"))
            #expect(text.contains("bad.toml:4: hooks.timeout: must be a whole number of seconds from 1 to 300"))
        }
    }
}
