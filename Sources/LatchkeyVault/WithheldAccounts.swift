public import FoundationEssentials
import LatchkeyEssentials

/// The accounts whose tokens the launcher never answers with (`confirm = true`): it leaves them
/// to the agent or the full command, which ask a person first; and the fingerprint of the policy
/// files (`PolicyFiles`) each provider's accounts were judged by, so that the launcher answers
/// none of them once config.toml or the provider file changed (a `confirm = true` added in place).
///
/// The full command writes the list beside the token copies (whose keys it simply leaves out for
/// these accounts) every time it writes them, so it lives and goes with them. The launcher's
/// answer from the vault itself (`UnlockedVaultAnswer`) needs the list: without it (none written
/// yet under this unlock, or refused by the kernel) it answers no token at all.
package struct WithheldAccounts: Equatable, Sendable {
    private struct Account: Hashable, Sendable {
        var provider: String
        var subject: String
    }

    private var accounts: Set<Account>
    /// Provider name → fingerprint; a provider without one has no account the launcher answers.
    private var policies: [String: String]

    package init(_ records: [AccountRecord], policies: [String: String]) {
        accounts = Set(records.map { Account(provider: $0.provider, subject: $0.subject) })
        self.policies = policies
    }

    package func contains(_ record: AccountRecord) -> Bool {
        accounts.contains(Account(provider: record.provider, subject: record.subject))
    }

    /// The fingerprint of the policy files `provider`'s accounts were judged by.
    package func policy(of provider: String) -> String? { policies[provider] }

    /// `{"accounts": [[PROVIDER, SUBJECT]…], "policies": [[PROVIDER, FINGERPRINT]…]}`, sorted, so
    /// the same list always gives the same bytes (they go into the copies' marker).
    package var payload: [UInt8] {
        let sorted = accounts.sorted { ($0.provider, $0.subject) < ($1.provider, $1.subject) }
        let wire = Wire(
            accounts: sorted.map { [$0.provider, $0.subject] }, policies: policies.sorted { $0.key < $1.key }.map { [$0.key, $0.value] })
        // Sorted keys too: the encoder's own order of an object's keys varies from run to run.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array((try? encoder.encode(wire)) ?? Data("{}".utf8))
    }

    package init?(payload: [UInt8]) {
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(payload)),
            (wire.accounts + wire.policies).allSatisfy({ $0.count == 2 })
        else { return nil }
        accounts = Set(wire.accounts.map { Account(provider: $0[0], subject: $0[1]) })
        policies = Dictionary(wire.policies.map { ($0[0], $0[1]) }, uniquingKeysWith: { first, _ in first })
    }

    private struct Wire: Codable {
        var accounts: [[String]]
        var policies: [[String]]
    }

    /// The list the full command last wrote for the vault at `vaultPath`; `nil` when there is none.
    package static func current(vaultPath: String) -> WithheldAccounts? {
        KeyringPayload.read(description: keyDescription(vaultPath: vaultPath)).flatMap(WithheldAccounts.init(payload:))
    }

    package static func keyDescription(vaultPath: String) -> String {
        "latchkey:withheld:" + vaultPath
    }
}
