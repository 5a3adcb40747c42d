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
        let lifetime = Int(unlockedUntil.timeIntervalSince(now).rounded(.down))
        guard lifetime > 0,
            let ring = try? KernelKeyring.replaceKeyring(description: TokenCopy.keyringDescription(vaultPath: vaultPath), timeout: lifetime)
        else { return }
        let byProvider = Dictionary(grouping: records, by: \.provider)
        for record in records {
            let expiry = min(record.expiresAt ?? unlockedUntil, unlockedUntil)
            let seconds = Int(expiry.timeIntervalSince(now).rounded(.down))
            let token = Array(record.accessToken.exposedValue.utf8)
            guard seconds > 0, token.count <= Self.largestCopied else { continue }
            let canonical = "\(record.provider):\(record.subject)"
            store(.token(expiresAt: UInt64(expiry.timeIntervalSince1970), token: token), selector: canonical, seconds: seconds, ring: ring)
            let siblings = byProvider[record.provider] ?? []
            if let name = record.displayName, name != record.subject, siblings.filter({ $0.displayName == name }).count == 1 {
                store(.alias(of: canonical), selector: "\(record.provider):\(name)", seconds: seconds, ring: ring)
            }
            if siblings.count == 1 {
                store(.alias(of: canonical), selector: record.provider, seconds: seconds, ring: ring)
            }
        }
    }

    /// Drops every copy (locking).
    func drop() {
        KernelKeyring.removeKeyring(description: TokenCopy.keyringDescription(vaultPath: vaultPath))
    }

    private func store(_ entry: TokenCopy.Entry, selector: String, seconds: Int, ring: Int32) {
        try? KernelKeyring.store(
            TokenCopy.encode(entry), description: TokenCopy.keyDescription(vaultPath: vaultPath, selector: selector), timeout: seconds,
            in: ring)
    }
}
