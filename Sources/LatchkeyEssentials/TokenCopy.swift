/// The short-lived copies of valid access tokens kept in the kernel keyring for the fast path.
///
/// All copies of one vault live in one keyring (`latchkey:tokens:VAULT`), so replacing that
/// keyring replaces every copy at once and `latchkey lock` drops them all. Inside it, one `user`
/// key per account holds the token, under an account key no command-line selector can name;
/// each selector the full command would resolve to exactly one account (`PROVIDER`,
/// `PROVIDER:SUBJECT`, `PROVIDER:NAME`, in `AccountSelector`'s own spelling) is a small key
/// pointing at that account's key. Account keys and selector keys have separate prefixes, so one
/// account's name can never take the key of another account's subject, and the per-user key quota
/// is spent once per token. One more key, the marker, names the vault file and unlock the copies
/// were made from.
///
/// Payloads: `0x04`, whether the token is DPoP-bound (`0x01`) or a bearer token (`0x00`), issue
/// time and expiry (i64 each, Unix seconds, big-endian; an expiry of `Int64.max` for a token the
/// provider gave none), then the token bytes; or `0x01`, the length
/// of the policy fingerprint (u16, big-endian), the fingerprint, then the account key the
/// selector points to; or `0x05`, the time until which it may be answered (i64), the length of the
/// policy fingerprint (u16), the fingerprint, then a whole answer of the full command to print as
/// it is (`aws-credential`'s JSON, under `awsAnswerKeyDescription`). The times are what `TokenValidity` needs, so a copy is judged by the rule
/// the vault's record is; the fingerprint (`PolicyFiles`) is that of config.toml and the provider
/// file as they were when the full command decided the account's token may be copied (no
/// `confirm = true`), so a copy is not answered once they changed. Payloads of older formats
/// (`0x00`, `0x02`, `0x03`, an alias without a fingerprint) decode to nothing or to a fingerprint no file
/// has: such a copy is never answered, and the full command, whose marker then differs
/// (`formatVersion`), writes it anew.
public enum TokenCopy {
    /// Goes into the marker, so copies an older format wrote are rewritten, not kept.
    public static let formatVersion: UInt8 = 4

    public static func keyringDescription(vaultPath: String) -> String {
        "latchkey:tokens:" + vaultPath
    }

    /// The key a selector (as `AccountSelector.description` spells it) is looked up under.
    public static func selectorKeyDescription(vaultPath: String, selector: String) -> String {
        "latchkey:token:" + vaultPath + "|" + selector
    }

    /// The key a token of `selector` narrowed to `resource` and `scopes` (sorted, as
    /// `TokenNarrowing` keeps them) is looked up under. Each part is preceded by its length, so no
    /// spelling of one part can be read as another, nor as a plain selector's key.
    public static func narrowedKeyDescription(vaultPath: String, selector: String, resource: String?, scopes: [String]) -> String {
        var scope = ""
        for name in scopes { scope += scope.isEmpty ? name : " " + name }
        var description = "latchkey:narrowed:" + vaultPath + "|" + counted(selector) + "|"
        description += (resource.map(counted) ?? "-") + "|" + counted(scope)
        return description
    }

    private static func counted(_ part: String) -> String { String(part.utf8.count) + ":" + part }

    /// The key the answer of `aws-credential SELECTOR` is kept under, for its options as given
    /// and `environment`, the set `AWSRoleOptions.environmentNames` among the client's variables:
    /// everything the answer depends on but the vault and the policy files, which the copies'
    /// keyring and the fingerprint follow. Each part is counted, a missing one is `-`, so no
    /// spelling of one reads as another.
    public static func awsAnswerKeyDescription(
        vaultPath: String, selector: String, options: AWSRoleOptions, environment: [String: String]
    ) -> String {
        var description = "latchkey:aws:" + vaultPath + "|" + counted(selector)
        for part in options.keyParts + AWSRoleOptions.environmentNames.map({ environment[$0] }) {
            description += "|" + (part.map(counted) ?? "-")
        }
        return description
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
        /// `expiresAt` is `nil` when the provider gave no expiry. `proofBound`: the token goes only
        /// with a DPoP proof, so no `Authorization: Bearer` header may carry it (`mcp headers`).
        case token(issuedAt: Int, expiresAt: Int?, token: [UInt8], proofBound: Bool)
        /// `policy`: the fingerprint of the policy files the copy was made under.
        case alias(of: String, policy: String)
        /// A whole answer of the full command, printed as it is until `usableUntil` (Unix seconds)
        /// while the policy files still have the fingerprint `policy`.
        case answer(usableUntil: Int, policy: String, text: [UInt8])
    }

    public static func encode(_ entry: Entry) -> [UInt8] {
        switch entry {
        case .token(let issuedAt, let expiresAt, let token, let proofBound):
            return [formatVersion, proofBound ? 1 : 0] + bigEndian(Int64(issuedAt)) + bigEndian(expiresAt.map(Int64.init) ?? .max) + token
        case .alias(let account, let policy):
            return [1] + counted(fingerprint: policy) + Array(account.utf8)
        case .answer(let usableUntil, let policy, let text):
            return [5] + bigEndian(Int64(usableUntil)) + counted(fingerprint: policy) + text
        }
    }

    public static func decode(_ payload: [UInt8]) -> Entry? {
        guard let kind = payload.first else { return nil }
        switch kind {
        case formatVersion where payload.count > 18 && payload[1] <= 1:
            let expiry = int64(payload[10..<18])
            return .token(
                issuedAt: Int(int64(payload[2..<10])), expiresAt: expiry == .max ? nil : Int(expiry), token: Array(payload[18...]),
                proofBound: payload[1] == 1)
        case 1:
            guard let (policy, rest) = fingerprint(payload[1...]) else { return nil }
            return .alias(of: String(decoding: rest, as: UTF8.self), policy: policy)
        case 5 where payload.count > 9:
            guard let (policy, rest) = fingerprint(payload[9...]) else { return nil }
            return .answer(usableUntil: Int(int64(payload[1..<9])), policy: policy, text: Array(rest))
        default:
            return nil
        }
    }

    /// A policy fingerprint preceded by its length (u16, big-endian).
    private static func counted(fingerprint policy: String) -> [UInt8] {
        let fingerprint = Array(policy.utf8.prefix(Int(UInt16.max)))
        return [UInt8(fingerprint.count >> 8), UInt8(fingerprint.count & 0xff)] + fingerprint
    }

    /// The fingerprint at the start of `bytes` and what follows it, which must not be empty.
    private static func fingerprint(_ bytes: ArraySlice<UInt8>) -> (String, ArraySlice<UInt8>)? {
        guard bytes.count > 2 else { return nil }
        let start = bytes.startIndex + 2
        let end = start + (Int(bytes[bytes.startIndex]) << 8 | Int(bytes[bytes.startIndex + 1]))
        guard bytes.endIndex > end else { return nil }
        return (String(decoding: bytes[start..<end], as: UTF8.self), bytes[end...])
    }

    private static func bigEndian(_ value: Int64) -> [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> (UInt64($0) * 8)) }
    }

    private static func int64(_ bytes: ArraySlice<UInt8>) -> Int64 {
        Int64(bitPattern: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
}
