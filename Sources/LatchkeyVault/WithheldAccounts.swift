public import FoundationEssentials
import LatchkeyEssentials

/// The accounts whose tokens the launcher never answers with (`confirm = true`): it leaves them
/// to the agent or the full command, which ask a person first.
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

    package init(_ records: [AccountRecord]) {
        accounts = Set(records.map { Account(provider: $0.provider, subject: $0.subject) })
    }

    package func contains(_ record: AccountRecord) -> Bool {
        accounts.contains(Account(provider: record.provider, subject: record.subject))
    }

    /// Sorted, so the same accounts always give the same bytes (they go into the copies' marker).
    package var payload: [UInt8] {
        let sorted = accounts.sorted { ($0.provider, $0.subject) < ($1.provider, $1.subject) }
        return Array((try? JSONEncoder().encode(sorted.map { [$0.provider, $0.subject] })) ?? Data("[]".utf8))
    }

    package init?(payload: [UInt8]) {
        guard let pairs = try? JSONDecoder().decode([[String]].self, from: Data(payload)), pairs.allSatisfy({ $0.count == 2 }) else {
            return nil
        }
        accounts = Set(pairs.map { Account(provider: $0[0], subject: $0[1]) })
    }

    /// The list the full command last wrote for the vault at `vaultPath`; `nil` when there is none.
    package static func current(vaultPath: String) -> WithheldAccounts? {
        KeyringPayload.read(description: keyDescription(vaultPath: vaultPath)).flatMap(WithheldAccounts.init(payload:))
    }

    package static func keyDescription(vaultPath: String) -> String {
        "latchkey:withheld:" + vaultPath
    }
}
