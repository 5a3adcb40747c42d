/// The short-lived copies of valid access tokens kept in the kernel keyring for the fast path.
///
/// All copies of one vault live in one keyring (`latchkey:tokens:VAULT`), so replacing that
/// keyring replaces every copy at once and `latchkey lock` drops them all. Inside it, one `user`
/// key per account holds the token, under an account key no command-line selector can name;
/// each selector the full command would resolve to exactly one account (`PROVIDER`,
/// `PROVIDER:SUBJECT`, `PROVIDER:NAME`) is a small key pointing at that account's key. Account
/// keys and selector keys have separate prefixes, so one account's name can never take the key
/// of another account's subject, and the per-user key quota is spent once per token. One more
/// key, the marker, names the vault file and unlock the copies were made from.
///
/// Payloads: `0x00`, expiry (u64, Unix seconds, big-endian), then the token bytes; or `0x01`
/// then the account key the selector points to.
public enum TokenCopy {
    public static func keyringDescription(vaultPath: String) -> String {
        "latchkey:tokens:" + vaultPath
    }

    /// The key a selector typed on the command line is looked up under.
    public static func selectorKeyDescription(vaultPath: String, selector: String) -> String {
        "latchkey:token:" + vaultPath + "|" + selector
    }

    /// The key holding the token of the account `account` (an opaque name chosen by the writer).
    public static func accountKeyDescription(vaultPath: String, account: String) -> String {
        "latchkey:account:" + vaultPath + "|" + account
    }

    /// The key saying which vault file and unlock the copies were made from, so the full command
    /// need not make them again; only the writer reads it.
    public static func markerKeyDescription(vaultPath: String) -> String {
        "latchkey:copies-of:" + vaultPath
    }

    public enum Entry: Equatable, Sendable {
        case token(expiresAt: UInt64, token: [UInt8])
        case alias(of: String)
    }

    public static func encode(_ entry: Entry) -> [UInt8] {
        switch entry {
        case .token(let expiresAt, let token):
            return [0] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: expiresAt >> (UInt64($0) * 8)) } + token
        case .alias(let selector):
            return [1] + Array(selector.utf8)
        }
    }

    public static func decode(_ payload: [UInt8]) -> Entry? {
        guard let kind = payload.first else { return nil }
        switch kind {
        case 0 where payload.count > 9:
            let expiry = payload[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .token(expiresAt: expiry, token: Array(payload[9...]))
        case 1 where payload.count > 1:
            return .alias(of: String(decoding: payload[1...], as: UTF8.self))
        default:
            return nil
        }
    }
}
