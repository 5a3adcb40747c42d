import CLatchkeySys
import LatchkeyEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Short-lived secrets in the Linux kernel key retention service (keyrings(7)).
///
/// A "user" key in the user keyring is readable by this user's processes only, lives in kernel
/// memory (never on disk or in swap), and is destroyed by the kernel when its timeout passes.
/// That is exactly the protection an agent's UNIX socket gives, without a daemon.
public enum KernelKeyring {
    public enum Failure: LatchkeyError, Equatable {
        /// The kernel or a sandbox (seccomp) refuses keyctl: cache nothing, ask each time.
        case unavailable(String)

        public var category: FailureCategory { .keystore }

        public var description: String {
            switch self {
            case .unavailable(let reason):
                return "the kernel keyring is unavailable here (\(reason)), so the vault cannot stay unlocked between commands: "
                    + "each one asks for the passphrase (scripts: LATCHKEY_PASSPHRASE_FILE)"
            }
        }
    }

    /// Stores `payload` under `description`, replacing any previous value, destroyed after `timeout` seconds.
    /// `keyring` is the user keyring unless given (a keyring made by `replaceKeyring`).
    public static func store(_ payload: [UInt8], description: String, timeout: Int, in keyring: Int32? = nil) throws(Failure) {
        let key = payload.withUnsafeBytes { lk_add_user_key(description, $0.baseAddress, $0.count, keyring ?? lk_user_keyring()) }
        guard key >= 0 else { throw .unavailable(String(cString: strerror(errno))) }
        try restrict(Int32(truncatingIfNeeded: key), timeout: timeout)
    }

    /// A new, empty keyring in the user keyring, replacing (and so dropping everything in) the one
    /// with the same description; destroyed after `timeout` seconds.
    public static func replaceKeyring(description: String, timeout: Int) throws(Failure) -> Int32 {
        let ring = lk_add_keyring(description, lk_user_keyring())
        guard ring >= 0 else { throw .unavailable(String(cString: strerror(errno))) }
        let id = Int32(truncatingIfNeeded: ring)
        try restrict(id, timeout: timeout)
        return id
    }

    /// The keyring with `description` in the user keyring, or `nil` when there is none.
    package static func keyring(description: String) -> Int32? {
        let ring = lk_search_keyring(lk_user_keyring(), description)
        return ring >= 0 ? Int32(truncatingIfNeeded: ring) : nil
    }

    /// Destroys the keyring with `description` and everything in it; `true` when there was one.
    @discardableResult
    public static func removeKeyring(description: String) -> Bool {
        guard let ring = keyring(description: description) else { return false }
        return lk_invalidate_key(ring) == 0
    }

    /// Possessor everything, this user view/read/search, nobody else anything; and a lifetime.
    private static func restrict(_ id: Int32, timeout: Int) throws(Failure) {
        guard lk_restrict_key(id) == 0, lk_set_key_timeout(id, UInt32(clamping: max(1, timeout))) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = lk_invalidate_key(id)
            throw .unavailable(reason)
        }
    }

    /// The payload stored under `description`, or `nil` when absent, expired or unreadable.
    public static func read(description: String) -> [UInt8]? {
        KeyringPayload.read(description: description)
    }

    /// Destroys the key stored under `description`; `true` when there was one.
    @discardableResult
    public static func remove(description: String) -> Bool {
        let key = lk_search_user_key(lk_user_keyring(), description)
        guard key >= 0 else { return false }
        return lk_invalidate_key(Int32(truncatingIfNeeded: key)) == 0
    }
}
