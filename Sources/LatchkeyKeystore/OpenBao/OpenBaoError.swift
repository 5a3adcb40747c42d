public import Foundation
import LatchkeyEssentials
public import LatchkeyProviders
public import LatchkeyVault

/// Why OpenBao gave Latchkey nothing: a name or address refused before anything is sent, an
/// account with no ID token, OpenBao's own refusal, no node answering, or an answer that is not
/// OpenBao's. Nothing is kept in any case.
public enum OpenBaoError: LatchkeyError, Equatable {
    /// No `--address`, no `openbao_address` in `provider`'s file, neither `BAO_ADDR` nor `VAULT_ADDR` set.
    case noAddress(provider: String)
    /// An address, role, mount or path refused before anything was sent (`OpenBaoNames`).
    case name(OpenBaoNameError)
    /// The account has no ID token to log in with (a plain OAuth 2.0 provider).
    case noIDToken(account: String, provider: String)
    /// OpenBao's answer `{"errors": […]}` to `action`, with its HTTP status.
    case refused(action: String, host: String, status: Int, errors: [String])
    /// A check-and-set write found another version than `expected`: someone wrote first.
    case versionChanged(path: String, expected: Int)
    /// A token file or AppRole secret ID file that cannot be used (`SecretFile`'s reason).
    case unusableFile(path: String, key: String, reason: String)
    /// `BAO_TOKEN` or `VAULT_TOKEN` holds what no token holds.
    case unusableToken(variable: String)
    /// config.toml's `[openbao]` names no way to log in, and the environment has no token.
    case noCredential
    /// A server error without OpenBao's errors list (a proxy's error page).
    case unavailable(host: String, status: Int)
    /// No address answered; each with what happened there.
    case unreachable(tried: [String])
    /// Every address answered that it is sealed (`host:port` each): nothing can be read or
    /// written until an operator unseals the cluster.
    case sealed(hosts: [String])
    /// An answer that is not OpenBao's, to `action`; nothing was used from it.
    case malformedAnswer(action: String, host: String, problem: String)
    /// A secret where the keystore keeps its own that Latchkey did not write: left alone.
    case notLatchkeys(path: String)
    /// Another machine held the keystore's lease (`owner`, until `until`) for all of `waited` seconds.
    case leaseHeld(path: String, owner: String, until: Date, waited: Int)
    /// `latchkey keystore leases --clear NAME` named no lease held at `path` (the keystore's path).
    case unknownLease(name: String, path: String)
    /// The lease to clear is held within its deadline: it ends by itself.
    case leaseLive(path: String, owner: String, secondsLeft: Int)
    /// OpenBao's policy does not let this token write the lease to clear it (HTTP 403).
    case leaseNotCleared(path: String, errors: [String])
    /// A write back failed, and these changes are bound to a DPoP key OpenBao does not hold (a
    /// sign-in): the journal never holds a key, so they were not kept.
    case newProofKeyNotKept(paths: [String], cause: String)

    public var category: FailureCategory {
        switch self {
        case .noAddress, .name: return .usage
        case .noIDToken: return .notFound
        case .refused(_, _, let status, _): return status >= 500 ? .unavailable : .rejected
        case .unavailable, .unreachable, .sealed, .versionChanged: return .unavailable
        case .unusableFile, .unusableToken, .noCredential, .notLatchkeys: return .configuration
        case .malformedAnswer: return .rejected
        case .leaseHeld, .leaseLive, .newProofKeyNotKept: return .unavailable
        case .unknownLease: return .notFound
        case .leaseNotCleared: return .rejected
        }
    }

    public var description: String {
        switch self {
        case .noAddress(let provider):
            return
                "no OpenBao address: pass --address https://openbao.example:8200, set openbao_address in the provider file of \(provider), or set BAO_ADDR (or VAULT_ADDR)"
        case .name(let error):
            return error.description
        case .noIDToken(let account, let provider):
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) has no ID token, which OpenBao's JWT login needs; sign in at an OpenID Connect provider (kind = \"oidc\") instead"
        case .refused(let action, let host, let status, let errors):
            // OpenBao lists causes on lines of their own ("1 error occurred:\n\t* permission denied").
            let words = errors.map { $0.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ") }.filter { !$0.isEmpty }
            let reason = words.isEmpty ? "no reason given" : words.joined(separator: "; ")
            return
                "OpenBao at \(TerminalText.sanitized(host, maxLength: 200)) refused \(action) (HTTP \(status)): \(TerminalText.sanitized(reason, maxLength: 500))"
        case .versionChanged(let path, let expected):
            return
                "\(path) is no longer at version \(expected): another writer was first (check-and-set); nothing was written, read it again"
        case .unusableFile(let path, let key, let reason):
            return "[openbao] \(key) \(TerminalText.sanitized(path, maxLength: 200)) cannot be used: \(reason)"
        case .unusableToken(let variable):
            return "the OpenBao token in \(variable) holds characters no token has (spaces or control characters)"
        case .noCredential:
            return
                "no way to log in to OpenBao: set token_file, or approle_role_id and approle_secret_id_file, in config.toml's [openbao], or BAO_TOKEN (or VAULT_TOKEN) in the environment"
        case .unavailable(let host, let status):
            return "OpenBao at \(TerminalText.sanitized(host, maxLength: 200)) answered HTTP \(status); try again later"
        case .unreachable(let tried):
            return
                "cannot reach OpenBao at \(TerminalText.sanitized(tried.joined(separator: "; "), maxLength: 1000)); check that it runs and is unsealed"
        case .sealed(let hosts):
            return
                "OpenBao is sealed at \(TerminalText.sanitized(hosts.joined(separator: ", "), maxLength: 1000)); nothing was read or changed: an operator must unseal it (bao operator unseal) before Latchkey can use it"
        case .malformedAnswer(let action, let host, let problem):
            return
                "OpenBao at \(TerminalText.sanitized(host, maxLength: 200)) answered \(action) with something that is not OpenBao's answer: \(TerminalText.sanitized(problem, maxLength: 200)); nothing was used"
        case .notLatchkeys(let path):
            return
                "OpenBao holds a secret at \(path) that Latchkey did not write; it was left alone and nothing was changed: move it, or set [openbao] path in config.toml to a path of Latchkey's own"
        case .leaseHeld(let path, let owner, let until, let waited):
            return
                "another Latchkey (\(TerminalText.sanitized(owner, maxLength: 200))) held the OpenBao lease \(path) for all of \(waited) s (until \(until.formatted(.iso8601))); nothing was changed, try again"
        case .unknownLease(let name, let path):
            return
                "no lease \(TerminalText.sanitized(name, maxLength: 200)) is held under \(path): `latchkey keystore leases` lists the ones that are (lease, or leases/HASH)"
        case .leaseLive(let path, let owner, let left):
            return
                "the OpenBao lease \(path) is held by \(TerminalText.sanitized(owner, maxLength: 200)) for \(left) s more, within a lease's length: it ends by itself, and clearing it could let two machines refresh one account at once; nothing was changed"
        case .leaseNotCleared(let path, let errors):
            let words = errors.joined(separator: " ").split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            return
                "OpenBao refused clearing the lease \(path) (HTTP 403: \(TerminalText.sanitized(words, maxLength: 300))): this token's policy does not allow writing it; nothing was changed. Ask someone whose policy does to run `latchkey keystore leases --clear`, or an operator to delete the secret"
        case .newProofKeyNotKept(let paths, let cause):
            return
                "OpenBao did not take the new tokens for \(paths.joined(separator: ", ")) (\(cause)); they are bound to a new DPoP key, which Latchkey writes to no file, so they were dropped: sign in again once OpenBao takes writes"
        }
    }
}

extension OpenBaoError {
    /// `check`'s refusal of a name or address, as OpenBao's error.
    public static func naming<Value>(_ check: () throws(OpenBaoNameError) -> Value) throws(OpenBaoError) -> Value {
        do {
            return try check()
        } catch {
            throw .name(error)
        }
    }
}
