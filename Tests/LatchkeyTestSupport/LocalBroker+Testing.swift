public import LatchkeyAccounts
public import LatchkeyBroker
public import LatchkeyKeystore
public import LatchkeyProviders
import Synchronization

extension LocalBroker {
    /// This machine's broker at a command's door over `service`: config.toml as `configuration`,
    /// `person` at the terminal (`nil`: nobody), the release log kept in `log`.
    public static func atCommand(
        _ service: AccountService, configuration: LatchkeyConfiguration = LatchkeyConfiguration(), person: (any BrokerPerson)? = nil,
        log: ReleaseLogRecorder = ReleaseLogRecorder(), memory: Memory = Memory()
    ) -> LocalBroker {
        return LocalBroker(
            settings: {
                BrokerSettings(
                    configuration: configuration, catalog: service.catalog,
                    hooks: Hooks(settings: configuration.hooks, environment: [:], report: { _ in }))
            }, accounts: { _, _ in service }, door: .command(person: person), log: log.record, memory: memory, say: { _ in })
    }
}

/// The release log as a test reads it.
public final class ReleaseLogRecorder: Sendable {
    private let entries = Mutex<[ReleaseLog.Entry]>([])

    public init() {}

    public var logged: [ReleaseLog.Entry] { entries.withLock { $0 } }

    public func append(_ entry: ReleaseLog.Entry) { entries.withLock { $0.append(entry) } }

    public var record: @Sendable (ReleaseLog.Entry) -> Void { { entry in self.append(entry) } }
}
