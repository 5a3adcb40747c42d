import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyDemo
import LatchkeyTUI
import LatchkeyVault
import Synchronization

/// The signal that ends `latchkey demo --no-tui`, recorded by its handler.
private let demoSignal = Atomic<Int32>(0)

/// `latchkey demo`: the whole product with no account anywhere. Two providers run in this
/// process on loopback (an OpenID provider and the Identity Toolkit emulator with SMS second
/// factors) and the screen opens on a throw-away vault in a private temporary directory.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Try Latchkey with two demo providers served on loopback; nothing is written outside a temporary directory.")

    @Option(name: .long, help: "Keep the demo's vault at this path when the demo ends (it must not exist yet).")
    var vault: String?

    @Flag(name: .customLong("no-tui"), help: "Serve the demo providers without the screen and print the environment that uses them.")
    var noTUI = false

    @Option(name: .long, help: .hidden)
    var browse: String?

    /// The watchdog's own command line (`DemoWatchdog`).
    @Option(name: .customLong("remove-when-done"), help: .hidden)
    var removeWhenDone: String?

    @MainActor
    func run() async throws {
        if let removeWhenDone { DemoWatchdog.waitThenRemove(removeWhenDone) }
        try await Failure.reporting {
            if let browse {
                // The demo browser for scripts: `BROWSER` as printed by `latchkey demo --no-tui`.
                guard let url = URL(string: browse) else { throw ValidationError("--browse needs a URL") }
                try await DemoBrowser.demoUser.signIn(at: url)
                return
            }
            let session = try await DemoSession.start(
                environment: ProcessInfo.processInfo.environment, keepVaultAt: vault, guardDirectory: DemoWatchdog.start(for:))
            let status = noTUI ? await serveUntilSignal(session).map { 128 + $0 } : showScreen(session)
            switch await session.close() {
            case .kept(let path)?: Output.info("Kept the demo vault at \(path) (passphrase: \(DemoSession.keptVaultPassphrase)).")
            case .notKept(let reason)?: Output.error("the demo vault was not kept: \(reason)")
            case nil: break
            }
            if let status { throw ExitCode(status) }
        }
    }

    /// The screen with the demo panel; returns the exit status when it is not 0: 128 plus the
    /// signal that closed it, or that of an unavailable service when the terminal cannot draw it.
    @MainActor
    private func showScreen(_ session: DemoSession) -> Int32? {
        let composition = session.composition()
        let panel: @Sendable () -> DemoPanel = { DemoPanel(notes: session.notes(), inbox: session.sms.all) }
        let hooks = DemoHooks(
            panel: panel,
            watch: { show in
                session.sms.onChange { _ in show(panel()) }
                // The phone app's code changes every 30 s.
                Task.detached {
                    while true {
                        try? await Task.sleep(for: .seconds(1))
                        show(panel())
                    }
                }
            },
            browse: { visit in
                switch visit {
                case .authorization(let url):
                    try await DemoBrowser.demoUser.signIn(at: url)
                case .device(let verificationURI, let userCode):
                    try await DemoBrowser.demoUser.approveDevice(at: verificationURI, userCode: userCode)
                }
            })
        do {
            let outcome = try Screen.run(environment: session.environment, service: composition.service, typedPassphrase: nil, demo: hooks)
            if case .interrupted(let signal) = outcome { return 128 + signal }
        } catch {
            Output.error("\(error.description); `latchkey demo --no-tui` runs the demo providers without the screen.")
            return Failure.exitCode(for: .unavailable)
        }
        return nil
    }

    /// `--no-tui`: prints the environment (shell syntax) that points `latchkey` at the demo, then
    /// serves until SIGINT, SIGTERM, SIGHUP or SIGQUIT.
    private func serveUntilSignal(_ session: DemoSession) async -> Int32? {
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { Foundation.signal(number) { demoSignal.store($0, ordering: .relaxed) } }
        let browser = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var lines = [
            "LATCHKEY_PROVIDERS_DIR", "LATCHKEY_PASSPHRASE_FILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
        ]
        .map { "export \($0)=\(Self.shellQuoted(session.environment[$0] ?? ""))" }
        lines.append("export BROWSER=\(Self.shellQuoted("\(browser) demo --browse %s"))")
        session.keepsSMSFile()
        lines.append("export LATCHKEY_DEMO_SMS_FILE=\(Self.shellQuoted(session.smsFile))")
        lines.append("# latchkey demo is running: \(session.notes().joined(separator: "; ")). Stop it with Ctrl-C.")
        Output.result(lines.joined(separator: "\n"))
        while true {
            let number = demoSignal.load(ordering: .relaxed)
            if number != 0 { return number }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    static func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
