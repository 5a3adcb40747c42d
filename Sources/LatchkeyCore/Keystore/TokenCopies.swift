import Foundation
import LatchkeyEssentials

/// Writes the kernel-keyring copies of valid access tokens that `latchkey token` reads on its
/// fast path (see `TokenCopy` for the layout and `TokenFastPath` for the reader).
///
/// Copies exist only while the vault is unlocked: each one lives no longer than the unlock and
/// no longer than its token, and `lock` drops them all. They are rewritten from the records
/// after every read or write of the vault, so a refresh, a new account or a logout is reflected
/// at once.
struct TokenCopies {
    let vaultPath: String
    /// Tokens larger than this stay in the vault only (the kernel's per-user quota is small).
    static let largestCopied = 16_000

    /// Replaces every copy with ones made from `records`, valid until `unlockedUntil` at most.
    func sync(_ records: [AccountRecord], unlockedUntil: Date, now: Date = Date()) {
        let lifetime = Int(wholeSeconds: unlockedUntil.timeIntervalSince(now))
        guard lifetime > 0,
            let ring = try? KernelKeyring.replaceKeyring(description: TokenCopy.keyringDescription(vaultPath: vaultPath), timeout: lifetime)
        else {
            // No new keyring (the unlock is over, or the kernel refuses new keys: quota full): the
            // old copies may hold a signed-out account's token, so they go rather than stay stale.
            drop()
            return
        }
        var copied: [Int: Int] = [:]
        for (index, record) in records.enumerated() {
            let expiry = min(record.expiresAt ?? unlockedUntil, unlockedUntil)
            let seconds = Int(wholeSeconds: expiry.timeIntervalSince(now))
            let token = Array(record.accessToken.exposedValue.utf8)
            guard seconds > 0, token.count <= Self.largestCopied else { continue }
            let description = TokenCopy.accountKeyDescription(vaultPath: vaultPath, account: String(index))
            store(
                .token(expiresAt: UInt64(clamping: Int(wholeSeconds: expiry.timeIntervalSince1970)), token: token),
                description: description, seconds: seconds,
                ring: ring)
            copied[index] = seconds
        }
        for (selector, index) in Self.selectors(for: records) {
            guard let seconds = copied[index] else { continue }
            store(
                .alias(of: String(index)), description: TokenCopy.selectorKeyDescription(vaultPath: vaultPath, selector: selector),
                seconds: seconds, ring: ring)
        }
    }

    /// Every selector a person could type for these records (`PROVIDER`, `PROVIDER:SUBJECT`,
    /// `PROVIDER:NAME`) that the full command resolves to exactly one record, with that record's
    /// index: the same `AccountSelector.select`, so the fast path never answers a selector the
    /// full command would call ambiguous or resolve to another account.
    static func selectors(for records: [AccountRecord]) -> [String: Int] {
        var resolved: [String: Int] = [:]
        // A selector only ever matches records of its provider: resolve within each provider.
        for (provider, indices) in Dictionary(grouping: records.indices, by: { records[$0].provider }) {
            let atProvider = indices.map { records[$0] }
            var candidates: Set<String> = [provider]
            for record in atProvider {
                candidates.insert("\(provider):\(record.subject)")
                if let name = record.displayName { candidates.insert("\(provider):\(name)") }
            }
            for selector in candidates {
                guard let chosen = try? AccountSelector(parsing: selector).select(from: atProvider),
                    let position = atProvider.firstIndex(of: chosen)
                else { continue }
                resolved[selector] = indices[position]
            }
        }
        return resolved
    }

    /// Drops every copy (locking).
    func drop() {
        KernelKeyring.removeKeyring(description: TokenCopy.keyringDescription(vaultPath: vaultPath))
    }

    private func store(_ entry: TokenCopy.Entry, description: String, seconds: Int, ring: Int32) {
        try? KernelKeyring.store(TokenCopy.encode(entry), description: description, timeout: seconds, in: ring)
    }
}
