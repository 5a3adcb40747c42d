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
        guard let request = Request(arguments) else { return nil }
        let vault = XDGDirectories.data { name in getenv(name).map { String(cString: $0) } } + "/vault"
        // The vault must still be there and private: a vault others can read is refused with its
        // own message by the full command, so it must not be bypassed here.
        var info = stat()
        guard lstat(vault, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 == 0 else { return nil }
        var selector = request.selector
        for _ in 0..<2 {
            guard let payload = read(TokenCopy.keyDescription(vaultPath: vault, selector: selector)) else { return nil }
            switch TokenCopy.decode(payload) {
            case .alias(let target):
                selector = target
            case .token(let expiresAt, var token):
                guard expiresAt > UInt64(time(nil)) + request.minimumLifetime else { return nil }
                token.append(UInt8(ascii: "\n"))
                let written = token.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
                return written == token.count ? 0 : nil
            case nil:
                return nil
            }
        }
        return nil
    }

    /// The only shape handled here: `token SELECTOR` with at most `--min-ttl N`.
    struct Request {
        var selector: String
        var minimumLifetime: UInt64 = 60

        init?(_ arguments: [String]) {
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
                guard let value, let seconds = UInt64(value) else { return nil }
                minimumLifetime = seconds
            }
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
