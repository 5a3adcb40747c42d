import LatchkeyEssentials
public import LatchkeyVault
import TOMLKit

/// What `latchkey agent` may do with an account's tokens: `forward = true` serves them to a
/// forwarded socket's clients, `confirm = true` releases each one only after a person agrees.
/// Unset (`nil`) defers to the next level: an account's `[accounts."PROVIDER:ACCOUNT"]` table in
/// config.toml, then its provider file, then neither.
public struct AccountSharing: Sendable, Equatable {
    public var forward: Bool?
    public var confirm: Bool?

    public init(forward: Bool? = nil, confirm: Bool? = nil) {
        self.forward = forward
        self.confirm = confirm
    }

    /// The keys a provider file or an `[accounts."…"]` table may set.
    static let keys = ["forward", "confirm"]

    /// Reads `forward` and `confirm` from `table`; a value that is not a boolean is an error.
    static func read(_ table: TOMLTable, reader: inout ProviderFileParser.Context, field: (String) -> String, line: Int? = nil)
        -> AccountSharing
    {
        var sharing = AccountSharing()
        for key in keys {
            guard let value = table[key] else { continue }
            guard let flag = value.bool else {
                if let line {
                    reader.fail(field(key), "must be true or false", line: line)
                } else {
                    reader.fail(field(key), "must be true or false")
                }
                continue
            }
            if key == "forward" { sharing.forward = flag } else { sharing.confirm = flag }
        }
        return sharing
    }
}

/// `[accounts."PROVIDER:ACCOUNT"]`: settings of one account, named as `latchkey token` names it.
public struct AccountSettings: Sendable, Equatable {
    public var selector: AccountSelector
    public var sharing: AccountSharing
    /// The table's line in config.toml, for messages.
    public var line: Int?
}

/// `[agent]`: how `latchkey agent` behaves.
public struct AgentSettings: Sendable, Equatable {
    /// `confirm_timeout`: seconds a `confirm = true` release waits for a person before it is refused.
    public var confirmTimeout = 60

    static let keys = ["confirm_timeout"]

    public init() {}
}

/// `[hooks]`: programs run on events, each given the event as JSON on stdin (never a token).
public struct HookSettings: Sendable, Equatable {
    /// The events, named as config.toml names their hooks.
    public enum Event: String, Sendable, CaseIterable, Codable {
        case signIn = "on_signin"
        case refreshFailed = "on_refresh_failed"
        case expiring = "on_expiring"
        case reauthNeeded = "on_reauth_needed"
        case release = "on_release"
    }

    /// Each event's program and arguments; the program is an absolute path.
    public var commands: [Event: [String]] = [:]
    /// `expiring_minutes`: how long before an account without a refresh token expires `on_expiring` runs.
    public var expiringMinutes = 10
    /// `timeout`: seconds a hook may run before its process group is killed.
    public var timeout = 10

    static let keys = Event.allCases.map(\.rawValue) + ["expiring_minutes", "timeout"]
}

extension LatchkeyConfiguration {
    /// What the agent may do with `record`'s tokens: its `[accounts."…"]` table first (the first
    /// one naming it, by subject or name), then its provider file; `false` when neither says.
    public func sharing(of record: AccountRecord, provider: Provider?) -> (forward: Bool, confirm: Bool) {
        sharing(of: record, fromFile: provider?.sharing)
    }

    /// What may be done with `record`'s tokens by the policy as it could be read: the one rule for
    /// the agent, the commands and the launcher's copies. `configuration` is `nil` while config.toml
    /// does not parse, and then no account is forwarded and every one needs a person's approval;
    /// a provider file that exists but cannot be read or parsed likewise leaves what its
    /// accounts' `[accounts]` tables do not set at `forward = false`, `confirm = true`. A policy
    /// that cannot be read must not be taken for one that allows everything.
    public static func sharing(
        of record: AccountRecord, configuration: LatchkeyConfiguration?, catalog: ProviderCatalog
    ) -> (forward: Bool, confirm: Bool) {
        guard let configuration else { return (false, true) }
        let fromFile: AccountSharing?
        do {
            fromFile = try catalog.provider(named: record.provider).sharing
        } catch .broken {
            fromFile = AccountSharing(forward: false, confirm: true)
        } catch {
            fromFile = nil
        }
        return configuration.sharing(of: record, fromFile: fromFile)
    }

    private func sharing(of record: AccountRecord, fromFile: AccountSharing?) -> (forward: Bool, confirm: Bool) {
        let own = accounts.first { $0.selector.provider == record.provider && record.matches(selector: $0.selector.account ?? "") }
        let forward = own?.sharing.forward ?? fromFile?.forward ?? false
        let confirm = own?.sharing.confirm ?? fromFile?.confirm ?? false
        return (forward, confirm)
    }

    // MARK: - Reading

    static func accounts(_ value: any TOMLValueConvertible, reader: inout ProviderFileParser.Context) -> [AccountSettings] {
        guard let table = value.table else {
            reader.fail("accounts", "must be tables such as [accounts.\"github:alice@example.com\"] with forward = true")
            return []
        }
        var settings: [AccountSettings] = []
        let ordered = table.keys.map { ($0, reader.headerLine(containing: $0)) }.sorted { ($0.1 ?? .max, $0.0) < ($1.1 ?? .max, $1.0) }
        for (written, line) in ordered {
            let shown = TerminalText.sanitized(written, maxLength: 200)
            let selector = AccountSelector(parsing: written)
            guard Provider.isValidName(selector.provider), selector.account != nil else {
                reader.fail(
                    "accounts", "\"\(shown)\" must name one account as PROVIDER:ACCOUNT (a whole provider is set in its file)", line: line)
                continue
            }
            guard let inner = table[written]?.table else {
                reader.fail("accounts", "\"\(shown)\" must be a table such as [accounts.\"\(shown)\"] with forward = true", line: line)
                continue
            }
            reader.unknownKeys(of: inner, known: AccountSharing.keys, section: "accounts.\"\(shown)\"", line: line)
            let sharing = AccountSharing.read(inner, reader: &reader, field: { "accounts.\"\(shown)\".\($0)" }, line: line)
            settings.append(AccountSettings(selector: selector, sharing: sharing, line: line))
        }
        return settings
    }

    static func agent(_ value: any TOMLValueConvertible, reader: inout ProviderFileParser.Context) -> AgentSettings {
        var settings = AgentSettings()
        guard let table = value.table else {
            reader.fail("agent", "must be a table: [agent] with confirm_timeout = 60")
            return settings
        }
        reader.unknownKeys(of: table, known: AgentSettings.keys, section: "agent")
        if let seconds = reader.wholeNumber(table, "confirm_timeout", in: 1...3600, unit: "seconds", section: "agent") {
            settings.confirmTimeout = seconds
        }
        return settings
    }

    static func hooks(_ value: any TOMLValueConvertible, reader: inout ProviderFileParser.Context) -> HookSettings {
        var settings = HookSettings()
        guard let table = value.table else {
            reader.fail("hooks", "must be a table: [hooks] with on_reauth_needed = [\"/usr/bin/notify-send\", \"Latchkey\"]")
            return settings
        }
        reader.unknownKeys(of: table, known: HookSettings.keys, section: "hooks")
        for event in HookSettings.Event.allCases {
            guard let value = table[event.rawValue] else { continue }
            let words = value.string.map { [$0] } ?? value.array.map { $0.map { $0.string } }
            guard let words, let program = words.first ?? nil, program.hasPrefix("/"),
                words.allSatisfy({ $0 != nil && !$0!.contains("\0") })
            else {
                reader.fail(
                    "hooks.\(event.rawValue)",
                    "must be an absolute program path, or an array of it and its arguments (strings)", lineKey: event.rawValue)
                continue
            }
            settings.commands[event] = words.compactMap { $0 }
        }
        if let minutes = reader.wholeNumber(table, "expiring_minutes", in: 1...1440, unit: "minutes", section: "hooks") {
            settings.expiringMinutes = minutes
        }
        if let seconds = reader.wholeNumber(table, "timeout", in: 1...300, unit: "seconds", section: "hooks") {
            settings.timeout = seconds
        }
        return settings
    }
}
