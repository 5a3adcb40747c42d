import Foundation
import LatchkeyAccounts
public import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeyProviders
import LatchkeySupport
import LatchkeyVault
import Synchronization

/// `latchkey agent`: the keystore's door for other processes, on this machine through a socket in
/// `$XDG_RUNTIME_DIR/latchkey`, and on other machines through a second socket that `ssh -R`
/// forwards (`--forward-socket`).
///
/// It holds the vault's key for as long as it runs, keeps every account fresh ahead of expiry as
/// the screen does, and answers token, status and git-credential requests. Which accounts a
/// forwarded connection may use (`forward = true`) and which releases wait for a person
/// (`confirm = true`) come from config.toml and the provider files, read again when they change.
/// Every release is logged (`ReleaseLog`); hooks hear about releases, failed refreshes, accounts
/// that need a sign-in and tokens about to expire.
public final class Agent: Sendable {
    public struct Options: Sendable {
        /// The local socket; `nil` for `$XDG_RUNTIME_DIR/latchkey/agent.sock`.
        public var socket: String?
        /// The socket for `ssh -R`, whose connections count as forwarded.
        public var forwardSocket: String?
        /// What the agent says as it runs (stderr): refreshes that failed, refused connections.
        public var say: @Sendable (String) -> Void
        /// Told of each release waiting for a person (a prompt on the agent's terminal, a desktop
        /// notification); the screen and `latchkey approve` hear of them through the socket.
        public var announce: @Sendable (WaitingRelease) -> Void
        /// What one client may take.
        var limits = AgentListener.Limits()

        public init(
            socket: String? = nil, forwardSocket: String? = nil, say: @escaping @Sendable (String) -> Void,
            announce: @escaping @Sendable (WaitingRelease) -> Void = { _ in }
        ) {
            self.socket = socket
            self.forwardSocket = forwardSocket
            self.say = say
            self.announce = announce
        }
    }

    /// Tokens this close to expiry are refreshed, as the screen refreshes them.
    public static let refreshWindow = 60

    let options: Options
    let environment: [String: String]
    let paths: LatchkeyPaths
    let records: RecentRecords
    /// The vault the agent holds, named to local clients that may sign in to it themselves.
    let vaultPath: String
    /// The engine, browser and listeners every request's `AccountService` shares.
    let base: AccountService
    /// The rule behind the vault's token copies, kept to the settings as they are read again.
    private let releasePolicy: ReleasePolicy?
    let log: ReleaseLog
    let confirmations: Confirmations
    /// What the agent's broker remembers across connections (`ForcedRefresh`, `ScopeStepUp`).
    let memory = LocalBroker.Memory()
    private let current: Mutex<BrokerSettings>
    private let running = Mutex<(listener: AgentListener?, stopped: Bool, finished: CheckedContinuation<Void, Never>?)>((nil, false, nil))
    let freshness = Mutex(Freshness())
    /// The hooks it fired that still run: ended with it, each with its process group.
    private let children = ChildProcessGroups()

    public init(composition: Composition, options: Options) {
        self.options = options
        environment = composition.environment
        paths = LatchkeyPaths(environment: composition.environment)
        vaultPath = composition.keystore.location
        records = RecentRecords(composition.keystore)
        base = composition.service
        releasePolicy = composition.releasePolicy
        log = ReleaseLog(path: ReleaseLog.defaultPath(environment: composition.environment))
        confirmations = Confirmations(announce: options.announce)
        let configuration = (try? composition.configuration.get()) ?? LatchkeyConfiguration()
        current = Mutex(
            BrokerSettings(
                configuration: configuration, catalog: composition.catalog,
                hooks: Hooks(
                    settings: configuration.hooks, environment: composition.environment, children: children, report: options.say)))
    }

    // MARK: - Running

    /// Unlocks the vault (asking now, if it must ask at all), listens, and serves until `stop`.
    /// The sockets are removed on the way out.
    public func run() async throws {
        _ = try await records.records()
        let local = try options.socket ?? Self.defaultSocket(environment: environment)
        // A socket named with --socket gets the check --forward-socket's does: in a directory
        // another user may write, they could replace it with theirs after the agent starts.
        if options.socket != nil { try AgentSocketFile.checkParent(of: local) }
        var bound: [AgentSocketFile.Bound] = []
        defer { bound.forEach(AgentSocketFile.remove) }
        bound.append(try AgentSocketFile.listen(at: local))
        var sockets = [AgentListener.Socket(descriptor: bound[0].descriptor, path: local, kind: .local)]
        if let forward = options.forwardSocket {
            try AgentSocketFile.checkParent(of: forward)
            bound.append(try AgentSocketFile.listen(at: forward))
            sockets.append(AgentListener.Socket(descriptor: bound[1].descriptor, path: forward, kind: .forwarded))
        }
        let listener = try AgentListener(
            sockets: sockets, limits: options.limits, log: options.say
        ) { [self] connection, line in
            Task { await handle(line, on: connection) }
        }
        let stoppedAlready = running.withLock { state in
            state.listener = listener
            return state.stopped
        }
        if stoppedAlready { return }
        let thread = Thread { listener.run() }
        thread.name = "latchkey-agent-listener"
        thread.start()
        options.say(
            "listening on \(local)" + (options.forwardSocket.map { " and, for forwarded connections, on \($0)" } ?? "")
                + " (\(records.backendName) \(vaultPath))")
        let fresh = Task { await keepFresh() }
        await withCheckedContinuation { continuation in
            let stopped = running.withLock { state in
                state.finished = continuation
                return state.stopped
            }
            if stopped { continuation.resume() }
        }
        fresh.cancel()
        await fresh.value
        children.endAll()
    }

    /// Makes `run` return: from a signal handler's task, or a test.
    public func stop() {
        let (listener, finished) = running.withLock { state in
            defer {
                state.stopped = true
                state.finished = nil
            }
            return (state.listener, state.finished)
        }
        listener?.stop()
        finished?.resume()
    }

    /// `$XDG_RUNTIME_DIR/latchkey/agent.sock`, its directory made (or checked) private.
    static func defaultSocket(environment: [String: String]) throws(AgentError) -> String {
        guard let directory = AgentSocket.directory({ environment[$0] }), let path = AgentSocket.defaultPath({ environment[$0] }) else {
            throw .noRuntimeDirectory
        }
        try AgentSocketFile.prepareDirectory(directory)
        return path
    }

    // MARK: - Settings

    /// config.toml and providers.d as they are now: read again when any file of them changed
    /// (`PolicySnapshot`: config.toml, a providers directory, a provider file added, removed,
    /// replaced or rewritten in place). While config.toml does not parse, the settings before it
    /// are kept for everything but the policy, which then refuses every forwarded release and
    /// asks a person for every other (`Settings.sharing`).
    func settings() -> BrokerSettings {
        let sources = PolicySnapshot { environment[$0] }
        return current.withLock { settings in
            if let previous = settings.sources, previous.matches(sources) { return settings }
            settings.sources = sources
            do {
                settings.configuration = try LatchkeyConfiguration.load(path: paths.configFile, environment: environment)
                if !settings.configurationReadable { options.say("config.toml can be used again") }
                settings.configurationReadable = true
            } catch {
                let reasons = (error as? ProviderFileErrors)?.errors.map(\.description).joined(separator: "\n") ?? "\(error)"
                if settings.configurationReadable {
                    options.say(
                        "config.toml was changed and cannot be used: until it is fixed, no forwarded connection gets a token"
                            + " and every release waits for a person's approval:\n" + reasons)
                }
                settings.configurationReadable = false
            }
            settings.catalog = Composition.loadCatalog(environment: environment, sources: sources)
            settings.hooks = Hooks(
                settings: settings.configuration.hooks, environment: environment, children: children, report: options.say)
            releasePolicy?.follow(
                configuration: settings.configurationReadable ? settings.configuration : nil, catalog: settings.catalog)
            return settings
        }
    }

    /// An `AccountService` for one request: the agent's keystore and engine, and for a local
    /// client its working directory, so a bare provider means what it would mean there.
    func service(_ settings: BrokerSettings, workingDirectory: String?) -> AccountService {
        var here: WorkingDirectory?
        if let workingDirectory, workingDirectory.hasPrefix("/"), !settings.configuration.directories.mappings.isEmpty {
            here = WorkingDirectory(
                path: workingDirectory, accounts: settings.configuration.directories, configFile: paths.configFile, warn: options.say)
        }
        let catalog = settings.catalog
        return AccountService(
            loadingCatalog: { catalog }, keystore: records, engine: base.engine, browser: base.browser, listeners: base.listeners,
            here: here)
    }
}

extension Agent {
    /// A person's answer to a waiting release, from the agent's own terminal; `false` when no
    /// such request waits.
    public func answer(_ id: Int, approve: Bool) -> Bool { confirmations.answer(id, approve: approve) }

    /// The releases waiting for a person, oldest first.
    public var waiting: [WaitingRelease] { confirmations.waiting }
}
