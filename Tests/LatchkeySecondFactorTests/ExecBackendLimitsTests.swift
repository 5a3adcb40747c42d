import Foundation
import Testing

@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

/// The exec plugin's documented limits, attacked the way a broken or hostile plugin would:
/// ignoring SIGTERM, leaving a grandchild holding stdout, flooding the output, running from a
/// directory or a symlink others control.
@Suite("The exec plugin's time, size and ownership limits hold", .serialized)
struct ExecBackendLimitsTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "latchkey-plugin-limits-" + UUID().uuidString
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// A plugin script in the private test directory.
    func plugin(_ name: String, _ body: String, mode: Int = 0o700) throws -> String {
        let path = directory + "/" + name
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    func backend(_ path: String, timeout: TimeInterval = 2) -> ExecBackend {
        var backend = ExecBackend(path: path, provider: "demo")
        backend.timeout = timeout
        return backend
    }

    func signIn(_ backend: ExecBackend) async -> (FirebaseAuthError?, Duration) {
        let started = ContinuousClock.now
        do {
            _ = try await backend.signIn(.password(email: "bob@example.com", password: Secret("pw")))
            return (nil, ContinuousClock.now - started)
        } catch {
            return (error, ContinuousClock.now - started)
        }
    }

    /// Whether a process whose command line holds `marker` is still running.
    func running(_ marker: String) -> Bool {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.contains { entry in
            guard Int(entry) != nil, let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(entry)/cmdline")) else { return false }
            return String(decoding: line, as: UTF8.self).contains(marker)
        }
    }

    @Test("a plugin that ignores SIGTERM is stopped at the deadline, with its whole process group")
    func ignoresTerm() async throws {
        let marker = "600.\(Int.random(in: 100...999))"
        let path = try plugin("stubborn", "trap '' TERM\nsleep \(marker) &\nsleep \(marker)")
        let (error, elapsed) = await signIn(backend(path, timeout: 1))
        #expect(error?.description.contains("did not answer within 1 s") == true)
        // The plugin would sleep 600 s; a loaded machine may take a few seconds to start it.
        #expect(elapsed < .seconds(30))
        try await Task.sleep(for: .milliseconds(200))
        #expect(!running("sleep \(marker)"), "a process of the plugin's group survived the deadline")
    }

    @Test("a grandchild holding stdout open does not keep the call waiting once the answer line came")
    func grandchildHoldsStdout() async throws {
        let marker = "601.\(Int.random(in: 100...999))"
        let path = try plugin(
            "leaky", "sleep \(marker) &\necho '{\"type\":\"error\",\"code\":\"invalid_credentials\",\"message\":\"no\"}'\nsleep \(marker)")
        let (error, elapsed) = await signIn(backend(path, timeout: 20))
        #expect(error == .invalidCredentials(code: "invalid_credentials"))
        #expect(elapsed < .seconds(15))
        try await Task.sleep(for: .milliseconds(200))
        #expect(!running("sleep \(marker)"))
    }

    @Test("an answer over 1 MiB is cut off at the cap, not read to the end")
    func floods() async throws {
        let path = try plugin("flood", "head -c 50000000 /dev/zero | tr '\\\\0' a")
        let (error, elapsed) = await signIn(backend(path, timeout: 20))
        #expect(error?.description.contains("more than 1024 KiB") == true)
        #expect(elapsed < .seconds(10))
    }

    @Test("the plugin starts with no signal blocked, whatever the calling thread blocks")
    func cleanSignalMask() async throws {
        let path = try plugin("selfkill", "kill -TERM $$\nsleep 3\necho '{\"type\":\"error\",\"code\":\"late\",\"message\":\"\"}'")
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let started = ContinuousClock.now
        let outcome = try ChildProcess.run(
            path: path, environment: ["PATH": "/usr/bin:/bin"], input: [], timeout: 10, outputLimit: 1 << 20, stopAtNewline: true)
        #expect(outcome.output.isEmpty && outcome.status == nil)
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test("a plugin reached through a symlink in a directory others can write is refused before it runs")
    func symlinkIntoWritableDirectory() throws {
        let shared = directory + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        chmod(shared, 0o777)
        let target = shared + "/plugin"
        try Data("#!/bin/sh\necho ran > \(directory)/ran\n".utf8).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o755)
        let link = directory + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(throws: FirebaseAuthError.self) { try backend(link).checkProgram() }
        #expect(!FileManager.default.fileExists(atPath: directory + "/ran"))
    }

    @Test("a plugin writable by its group, or owned by another user, is refused")
    func writableOrForeign() throws {
        let writable = try plugin("group-writable", "true", mode: 0o770)
        #expect(throws: FirebaseAuthError.self) { try backend(writable).checkProgram() }
        let foreign = try plugin("foreign", "true", mode: 0o755)
        guard geteuid() == 0 else { return }
        chown(foreign, 65_534, 65_534)
        #expect(throws: FirebaseAuthError.self) { try backend(foreign).checkProgram() }
        let mine = try plugin("mine", "true", mode: 0o755)
        #expect(try backend(mine).checkProgram() == mine)
    }
}
