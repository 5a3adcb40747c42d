import CLatchkeySys

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey token SELECTOR [--min-ttl N]` answered from the kernel keyring, before the command
/// line parser, Foundation or the vault are touched: two syscalls and a write.
///
/// Anything it does not recognise, or a copy that is missing or too close to expiry, returns
/// `nil` and the full command runs (which refreshes, and writes new copies).
public enum TokenFastPath {
    /// Prints the token and returns the exit status, or `nil` to let the full command answer.
    public static func run(_ arguments: [String]) -> Int32? {
        guard let request = Request(arguments), let vault = privateVaultPath() else { return nil }
        // A selector key points at an account key; anything else is not ours to answer.
        guard let alias = read(TokenCopy.selectorKeyDescription(vaultPath: vault, selector: request.selector)),
            case .alias(let account) = TokenCopy.decode(alias),
            let payload = read(TokenCopy.accountKeyDescription(vaultPath: vault, account: account)),
            case .token(let expiresAt, var token) = TokenCopy.decode(payload)
        else { return nil }
        guard request.isFresh(expiresAt: expiresAt, now: time(nil)) else { return nil }
        token.append(UInt8(ascii: "\n"))
        let written = token.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        return written == token.count ? 0 : nil
    }

    /// The vault's path when the file is there and private, in a directory only this user can
    /// change: the full command refuses anything else with its own message, so no answer from the
    /// keyring may bypass that.
    public static func privateVaultPath() -> String? {
        let vault = XDGDirectories.data { name in getenv(name).map { String(cString: $0) } } + "/vault"
        var info = stat()
        guard lstat(vault, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 == 0 else { return nil }
        var directory = stat()
        guard stat(String(vault.dropLast("/vault".count)), &directory) == 0, directory.st_uid == geteuid(),
            directory.st_mode & 0o022 == 0
        else { return nil }
        return vault
    }

    /// The only shape handled here: `token SELECTOR` with at most `--min-ttl N`.
    public struct Request {
        public var selector: String
        public var minimumLifetime: UInt64 = 60

        public init?(_ arguments: [String]) {
            var rest = arguments.dropFirst()
            guard rest.popFirst() == "token", let selector = rest.popFirst(), !selector.hasPrefix("-"), !selector.isEmpty else {
                return nil
            }
            self.selector = selector
            while let option = rest.popFirst() {
                let value: String?
                if option == "--min-ttl" {
                    value = rest.popFirst()
                } else if option.hasPrefix("--min-ttl=") {
                    value = String(option.dropFirst("--min-ttl=".count))
                } else {
                    return nil
                }
                // The full command takes an `Int`: a value it would refuse is not answered here either.
                guard let value, let seconds = Int(value), seconds >= 0 else { return nil }
                minimumLifetime = UInt64(seconds)
            }
        }

        /// Whether a token expiring at `expiresAt` outlives the minimum lifetime from `now`, as
        /// `AccountRecord.isValid` decides; subtraction, so no input can overflow.
        public func isFresh(expiresAt: UInt64, now: Int) -> Bool {
            let current = UInt64(clamping: now)
            return expiresAt > current && expiresAt - current > minimumLifetime
        }
    }

    private static func read(_ description: String) -> [UInt8]? {
        let key = lk_search_user_key(lk_user_keyring(), description)
        guard key >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let length = buffer.withUnsafeMutableBytes { lk_read_key(Int32(truncatingIfNeeded: key), $0.baseAddress, $0.count) }
        guard length > 0, length <= buffer.count else { return nil }
        return Array(buffer[0..<length])
    }
}
