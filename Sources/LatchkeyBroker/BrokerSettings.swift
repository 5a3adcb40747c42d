public import LatchkeyAccounts
import LatchkeyEssentials
public import LatchkeyProviders
public import LatchkeyVault

/// What the release rules read, as they are at one moment: config.toml, the provider files and
/// the hooks. The agent reads them again whenever one of the files changes (`Agent.settings()`);
/// a command reads them once.
public struct BrokerSettings: Sendable {
    /// The policy files as they were before these were read; `nil` when nobody compares them.
    var sources: PolicySnapshot?
    public var configuration: LatchkeyConfiguration
    /// `false` while config.toml does not parse: `configuration` is then the last one that did.
    public var configurationReadable: Bool
    public var catalog: ProviderCatalog
    public var hooks: Hooks

    public init(configuration: LatchkeyConfiguration, configurationReadable: Bool = true, catalog: ProviderCatalog, hooks: Hooks) {
        self.configuration = configuration
        self.configurationReadable = configurationReadable
        self.catalog = catalog
        self.hooks = hooks
    }

    /// What may be done with `record`'s tokens (`LatchkeyConfiguration.sharing`): while
    /// config.toml does not parse, nothing goes to a forwarded connection and every release
    /// waits for a person.
    public func sharing(of record: AccountRecord) -> (forward: Bool, confirm: Bool) {
        LatchkeyConfiguration.sharing(of: record, configuration: configurationReadable ? configuration : nil, catalog: catalog)
    }

    /// The provider `name`, or `nil` when none is configured here.
    func provider(_ name: String) -> Provider? { try? catalog.provider(named: name) }
}
