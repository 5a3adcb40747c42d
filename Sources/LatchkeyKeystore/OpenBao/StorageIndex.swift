import LatchkeySupport
import Synchronization

/// Where OpenBao's storage stood after the latest write of one piece of work (its
/// `X-Vault-Index` response header, opaque), sent back with each later request of that work so
/// that the node answering has applied those writes, or forwards the request to the active
/// node, which has (`X-Vault-Inconsistent: forward-active-node`).
///
/// OpenBao's standbys answer reads from their own copy, which lags the active node's (OpenBao
/// 2.5 and later, unless every node sets `disable_standby_reads`). The lease makes machines take
/// turns, but only if each reads what the one before it wrote: a standby's copy from before
/// that write would hand a refresh the refresh token the provider already rotated, and reuse
/// protection then revokes the account for everyone. The lease's own write is ordered after
/// every write committed before it (Raft keeps one log), the previous holder's included, so its
/// index covers them. OpenBao 2.7 reads these headers; an older one ignores them, and then only
/// `disable_standby_reads` keeps reads current.
final class StorageIndex: Sendable {
    private let latest = Mutex<String?>(nil)

    /// The headers a request made after the writes recorded here carries; none before the first.
    var headers: [(String, String)] {
        guard let index = latest.withLock({ $0 }) else { return [] }
        return [("X-Vault-Index", index), ("X-Vault-Inconsistent", "forward-active-node")]
    }

    /// Keeps the index a write's `response` reports (each later write's is at least as far on).
    /// One that is not visible ASCII (OpenBao's is base64) is not one to send back.
    func record(_ response: HTTPResponse) {
        guard let index = response.headers.last(where: { $0.0.lowercased() == "x-vault-index" })?.1, !index.isEmpty,
            index.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return }
        latest.withLock { $0 = index }
    }
}
