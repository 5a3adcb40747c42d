import FoundationEssentials
import LatchkeyEssentials

/// The accounts whose tokens the launcher never answers with (`confirm = true`): it leaves them
/// to the agent or the full command, which ask a person first; and the fingerprint of the policy
/// files (`PolicyFiles`) each provider's accounts were judged by, so that the launcher answers
/// none of them once config.toml or the provider file changed (a `confirm = true` added in place).
///
/// The full command writes the list every time it writes the token copies (whose keys it simply
/// leaves out for these accounts), but on its own in the user keyring, beside the vault key, not
/// in the copies' keyring: copies the kernel cut short, that expired or that someone dropped leave
/// the launcher's answer from the vault itself (`UnlockedVaultAnswer`) its list, so it answers in
/// a few milliseconds instead of handing every such call to `latchkey-cli`. Without the list (none
/// written yet under this unlock, refused by the kernel, or `lock`) it answers no token at all.
///
/// The list also names, by a digest, every account it judged: an account it never judged (added
/// by a write that could not rewrite the list) is answered by the full command, never let through
/// because the list does not name it.
package struct WithheldAccounts: Equatable, Sendable {
    private struct Account: Hashable, Sendable {
        var provider: String
        var subject: String
    }

    private var accounts: Set<Account>
    /// Provider name → fingerprint; a provider without one has no account the launcher answers.
    private var policies: [String: String]
    /// `judgedDigest` of the records the list was made from.
    private var judged: String

    /// The list for `records`, those at `withheld` withheld, judged by `policies`.
    package init(_ records: [AccountRecord], withholding withheld: Set<Int>, policies: [String: String]) {
        accounts = Set(withheld.map { Account(provider: records[$0].provider, subject: records[$0].subject) })
        self.policies = policies
        judged = Self.judgedDigest(records)
    }

    /// `true` when the list was made from exactly these accounts (by provider and subject).
    package func judged(_ records: [AccountRecord]) -> Bool {
        Self.judgedDigest(records) == judged
    }

    /// SHA-256 (hex, first 16 bytes) of the records' providers and subjects, sorted, each
    /// followed by a NUL (neither holds one): the vault's order does not matter.
    private static func judgedDigest(_ records: [AccountRecord]) -> String {
        var digest = VaultCrypto.SHA256()
        for (provider, subject) in records.map({ ($0.provider, $0.subject) }).sorted(by: <) {
            digest.update(Array(provider.utf8) + [0] + Array(subject.utf8) + [0])
        }
        return digest.finalize().prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    package func contains(_ record: AccountRecord) -> Bool {
        accounts.contains(Account(provider: record.provider, subject: record.subject))
    }

    /// The fingerprint of the policy files `provider`'s accounts were judged by.
    package func policy(of provider: String) -> String? { policies[provider] }

    /// `{"accounts": [[PROVIDER, SUBJECT]…], "judged": DIGEST, "policies": [[PROVIDER, FINGERPRINT]…]}`,
    /// sorted, so the same list always gives the same bytes (they go into the copies' marker).
    package var payload: [UInt8] {
        let sorted = accounts.sorted { ($0.provider, $0.subject) < ($1.provider, $1.subject) }
        let wire = Wire(
            accounts: sorted.map { [$0.provider, $0.subject] }, judged: judged,
            policies: policies.sorted { $0.key < $1.key }.map { [$0.key, $0.value] })
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
        judged = wire.judged
    }

    /// `judged` is required: a list an older Latchkey wrote, without it, is no list.
    private struct Wire: Codable {
        var accounts: [[String]]
        var judged: String
        var policies: [[String]]
    }

    /// The list the full command last wrote for the vault at `vaultPath`; `nil` when there is none.
    /// In the user keyring (a search there also finds a list an older Latchkey kept in the copies'
    /// keyring, which has no `judged` and so is no list).
    package static func current(vaultPath: String) -> WithheldAccounts? {
        KeyringPayload.read(description: keyDescription(vaultPath: vaultPath)).flatMap(WithheldAccounts.init(payload:))
    }

    package static func keyDescription(vaultPath: String) -> String {
        "latchkey:withheld:" + vaultPath
    }
}
