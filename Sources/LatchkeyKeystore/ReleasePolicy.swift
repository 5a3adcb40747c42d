import Foundation
import LatchkeyEssentials
package import LatchkeyProviders
public import LatchkeyVault
import Synchronization

/// Which accounts release a token only once a person agrees (`confirm = true`), and how long a
/// release waits for that: config.toml's `[accounts]` over the provider files, `[agent]
/// confirm_timeout`. One rule for the agent, the command line and the launcher's copies, so no
/// door hands out what another would ask about.
public final class ReleasePolicy: Sendable {
    /// `configuration` is `nil` while config.toml does not parse (the agent goes on running then).
    private let source: Mutex<(configuration: LatchkeyConfiguration?, catalog: @Sendable () -> ProviderCatalog)>
    /// Where a command logs what the person answered, as the agent logs its releases, and where
    /// a log that cannot be written is said.
    private let log: (file: ReleaseLog, warn: @Sendable (String) -> Void)?

    package init(
        configuration: LatchkeyConfiguration, providers: LazyProviderCatalog,
        log: (file: ReleaseLog, warn: @Sendable (String) -> Void)? = nil
    ) {
        source = Mutex((configuration, { providers.catalog }))
        self.log = log
    }

    /// Logs a command's release or refusal; never fatal.
    package func record(_ entry: ReleaseLog.Entry) {
        if let log, let problem = log.file.append(entry) { log.warn(problem) }
    }

    /// The agent reads config.toml and providers.d again when they change; the copies it writes
    /// then follow what they say now (`nil`: config.toml no longer parses).
    package func follow(configuration: LatchkeyConfiguration?, catalog: ProviderCatalog) {
        source.withLock { $0 = (configuration, { catalog }) }
    }

    /// Whether a token of `record` needs a person's approval before it leaves Latchkey.
    public func needsApproval(_ record: AccountRecord) -> Bool {
        let (configuration, catalog) = source.withLock { $0 }
        return LatchkeyConfiguration.sharing(of: record, configuration: configuration, catalog: catalog()).confirm
    }

    /// The fingerprint of the files this policy of `provider`'s accounts was read from
    /// (`PolicyFiles`), for the launcher to compare with the files as they are; `nil` when it
    /// cannot be known (a file changed while it was read, or just now), and then the launcher
    /// answers nothing of that provider's accounts.
    func fingerprint(ofProvider provider: String) -> String? {
        let (configuration, catalog) = source.withLock { $0 }
        guard let configuration else { return nil }
        return catalog().sources?.fingerprint(ofProvider: provider, configIdentity: configuration.sourceIdentity)
    }

    /// Seconds a release waits for a person before it is refused.
    public var timeout: Int { source.withLock { $0.configuration?.agent.confirmTimeout ?? AgentSettings().confirmTimeout } }
}
