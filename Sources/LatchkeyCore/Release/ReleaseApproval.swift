public import Foundation
import LatchkeyEssentials
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

    init(
        configuration: LatchkeyConfiguration, providers: LazyProviderCatalog,
        log: (file: ReleaseLog, warn: @Sendable (String) -> Void)? = nil
    ) {
        source = Mutex((configuration, { providers.catalog }))
        self.log = log
    }

    /// Logs a command's release or refusal; never fatal.
    func record(_ entry: ReleaseLog.Entry) {
        if let log, let problem = log.file.append(entry) { log.warn(problem) }
    }

    /// The agent reads config.toml and providers.d again when they change; the copies it writes
    /// then follow what they say now (`nil`: config.toml no longer parses).
    func follow(configuration: LatchkeyConfiguration?, catalog: ProviderCatalog) {
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

/// A person who can agree to a token of a `confirm = true` account going to another program, when
/// a command on this machine hands it on without the agent (which asks in its own ways). The
/// command line's terminal interaction is one.
public protocol ReleaseApproval: Sendable {
    /// Whether the person agrees that `requester` gets a token of `account`; `nil` when nobody
    /// answered within `seconds`.
    func approveRelease(of account: String, to requester: String, within seconds: Int) async -> Bool?
}

/// Why a token of a `confirm = true` account was not released.
public enum ReleaseRefusal: LatchkeyError, Equatable {
    case denied(account: String)
    case notApproved(account: String, seconds: Int)
    /// No agent answered and there is no terminal to ask on (cron, CI, a service, a pipe).
    case nobodyToAsk(account: String)

    public var category: FailureCategory { .keystore }

    public var description: String {
        switch self {
        case .denied(let account):
            return "the release of a token of \(TerminalText.sanitized(account, maxLength: 200)) was denied"
        case .notApproved(let account, let seconds):
            return "nobody approved the release of a token of \(TerminalText.sanitized(account, maxLength: 200)) within \(seconds) s"
        case .nobodyToAsk(let account):
            return
                "\(TerminalText.sanitized(account, maxLength: 200)) is marked confirm = true and there is nobody to ask here (no terminal, no agent): start `latchkey agent`, which asks in its terminal, the open screen or by `latchkey approve`, or run this at a terminal"
        }
    }
}

extension AccountService {
    /// Asks `approval` before `record`'s token goes to the program that ran this one, when the
    /// policy says so; throws the refusal otherwise. The answer is logged as the agent logs its
    /// releases (`latchkey agent log`); a log that cannot be written is said, never fatal.
    func approveRelease(of record: AccountRecord, asking approval: (any ReleaseApproval)?) async throws(ReleaseRefusal) {
        guard let releasePolicy, releasePolicy.needsApproval(record) else { return }
        let account = "\(record.provider):\(record.label)"
        let requester = Requester.parentOfThisProcess().description
        func logged(_ outcome: ReleaseLog.Entry.Outcome, _ reason: String? = nil) {
            let entry = ReleaseLog.Entry(
                time: engine.now(), account: account, requester: requester, forwarded: false, outcome: outcome, reason: reason)
            releasePolicy.record(entry)
        }
        guard let approval else {
            logged(.refused, "nobody to ask")
            throw .nobodyToAsk(account: account)
        }
        let seconds = releasePolicy.timeout
        switch await approval.approveRelease(of: account, to: requester, within: seconds) {
        case true?:
            logged(.released)
        case false?:
            logged(.denied)
            throw .denied(account: account)
        case nil:
            logged(.unapproved)
            throw .notApproved(account: account, seconds: seconds)
        }
    }
}
