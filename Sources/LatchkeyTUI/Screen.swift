import CNcursesw
import Foundation
public import LatchkeyAccounts
import LatchkeyProviders
import LatchkeySupport
import Synchronization

/// A signal that asked the screen to close, recorded by its handler and acted on by the loop.
private let pendingSignal = Atomic<Int32>(0)

/// The full-screen front end: opens the terminal, runs the loop, restores the terminal.
public enum Screen {
    public enum Outcome: Sendable, Equatable {
        case quit
        /// SIGINT, SIGTERM, SIGHUP or SIGQUIT closed the screen (the terminal was restored first).
        case interrupted(signal: Int32)
    }

    /// How long the loop waits for a key before it looks at the inbox and the clock.
    static let tickMilliseconds = 100

    /// Runs the screen until the person quits. Call it on the process's main thread.
    ///
    /// `typedPassphrase` is the keystore's passphrase provider when the vault is to be unlocked
    /// by a prompt in the screen; nil when it is unlocked otherwise (`LATCHKEY_PASSPHRASE_FILE`).
    public static func run(
        environment: [String: String], service: AccountService, typedPassphrase: TypedPassphrase?, demo: DemoHooks? = nil
    ) throws(ScreenError) -> Outcome {
        // Handlers first: ncurses then leaves INT/TERM/HUP/QUIT alone (it only takes over SIG_DFL)
        // and keeps SIGWINCH, which it turns into KEY_RESIZE. QUIT (Ctrl-\) too: its default
        // action would end the process with the terminal still in the screen's modes.
        let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
        pendingSignal.store(0, ordering: .relaxed)
        for number in signals { signal(number) { pendingSignal.store($0, ordering: .relaxed) } }
        defer { for number in signals { signal(number, SIG_DFL) } }

        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let terminal = try NcursesTerminal(noColor: noColor)
        defer { terminal.close() }

        let inbox = Inbox(waker: terminal.waker)
        let runner = EffectRunner(
            inbox: inbox, service: service, typedPassphrase: typedPassphrase, vaultPath: LatchkeyPaths(environment: environment).vaultFile,
            driver: terminal, environment: environment, isRemote: !(environment["SSH_CONNECTION"] ?? "").isEmpty, demoBrowse: demo?.browse)
        let catalog = service.catalog
        defer { runner.cancelAll() }
        var state = AppState(providers: catalog.providers.map(ProviderSummary.init), now: Date(), size: terminal.size)
        if let demo {
            state.demo = demo.panel()
            demo.watch { panel in inbox.post(.demoPanel(panel)) }
        }
        if !catalog.errors.isEmpty {
            state.message = AppState.Message(
                text: "\(catalog.errors.count) provider file(s) have errors; run `latchkey providers check`.", isError: true)
        }
        runner.start()
        return loop(state: &state, driver: terminal, inbox: inbox, perform: runner.perform)
    }

    /// The loop itself, on any driver: wait for a key (at most one tick), drain the inbox, apply
    /// everything to the state, do the effects, draw the frame if it changed.
    static func loop(
        state: inout AppState, driver: any TerminalDriver, inbox: Inbox, clock: () -> Date = Date.init, maximumTicks: Int? = nil,
        perform: (Effect) -> Void
    ) -> Outcome {
        let painter = Painter(driver: driver)
        var ticks = 0
        while maximumTicks.map({ ticks < $0 }) ?? true {
            ticks += 1
            let number = pendingSignal.exchange(0, ordering: .relaxed)
            if number != 0 { return .interrupted(signal: number) }
            painter.paint(Renderer.render(state))
            var events: [Event] = []
            // One key with the tick's timeout, then whatever else is already waiting (a paste).
            var key = driver.readKey(timeoutMilliseconds: tickMilliseconds)
            while let pressed = key, events.count < 256 {
                if pressed == .resize {
                    painter.invalidate()
                    events.append(.resize(driver.size))
                } else {
                    events.append(.key(pressed))
                }
                key = driver.readKey(timeoutMilliseconds: 0)
            }
            events += inbox.drain()
            events.append(.tick(clock()))
            for event in events {
                for effect in state.handle(event) {
                    if effect == .quit { return .quit }
                    perform(effect)
                }
            }
        }
        return .quit
    }
}
