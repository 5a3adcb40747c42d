public import FoundationEssentials
import LatchkeyEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// What the launcher answers from the vault itself, opened with the key an unlock left in the
/// kernel keyring, so that these commands never load `latchkey-cli`:
///
/// - `token SELECTOR [--min-ttl N]` when the keyring holds no copy of the token (right after
///   `unlock`, or when the key quota cut the copies short) and the token needs no refresh;
/// - `status --json`, which needs nothing but the records.
///
/// It reads the same file with the same checks, decodes the same records and applies the same
/// selection, validity and report code as the full command, because those live in this module
/// and the full command calls them too; so it never prints what the full command would not. All
/// else returns `nil` and the full command answers: a locked vault (it asks for the
/// passphrase), a token to refresh, a selector it would refuse (with its message), a damaged
/// file. It writes nothing: the token copies are the full command's to make.
public enum UnlockedVaultAnswer {
    /// Prints the answer and returns the exit status, or `nil` to let the full command answer.
    public static func run(_ arguments: [String], now: Date = Date()) -> Int32? {
        if arguments.dropFirst().elementsEqual(["status", "--json"]) { return status(now: now) }
        return token(arguments, now: now)
    }

    private static func token(_ arguments: [String], now: Date) -> Int32? {
        guard let request = TokenFastPath.Request(arguments), let records = records(),
            let index = try? AccountSelector(parsing: request.selector).index(in: records),
            records[index].isValid(at: now, margin: TimeInterval(request.minimumLifetime))
        else { return nil }
        var line = Array(records[index].accessToken.exposedValue.utf8) + [UInt8(ascii: "\n")]
        defer { line.zeroize() }
        return printed(line) ? 0 : nil
    }

    private static func status(now: Date) -> Int32? {
        guard let records = records(),
            let json = try? StatusReport(records: records, keystore: VaultFormat.keystoreName, now: now).json()
        else { return nil }
        return printed(Array((json + "\n").utf8)) ? 0 : nil
    }

    private static func records() -> [AccountRecord]? {
        TokenFastPath.privateVaultPath().flatMap(UnlockedVault.records(at:))
    }

    /// One `write`: a pipe closed early leaves nothing half-printed for the full command to repeat.
    private static func printed(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) } == bytes.count
    }
}

/// The vault's records read with the key an unlock cached, never asking for a passphrase.
package enum UnlockedVault {
    /// `nil` when the vault is locked, not a private regular file, or does not open with the key.
    package static func records(at path: String) -> [AccountRecord]? {
        guard var bytes = readPrivateFile(path) else { return nil }
        defer { bytes.zeroize() }
        guard let parsed = try? VaultFormat.parse(bytes), let key = VaultKeyCache(vaultPath: path).key(for: parsed.header),
            var plaintext = try? VaultFormat.open(sealed: parsed.sealed, headerBytes: parsed.headerBytes, key: key)
        else { return nil }
        defer { plaintext.zeroize() }
        return try? VaultContents.decode(plaintext)
    }

    /// The file's bytes if it is a regular file only its owner can read, checked on the open
    /// descriptor (no symlink followed), so a file swapped in after the path was checked is refused too.
    private static func readPrivateFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 == 0,
            info.st_uid == geteuid()
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            filled += count
        }
        // One byte more than fstat said was asked for: a file that grew while read is left to the full command.
        guard filled < bytes.count else { return nil }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }
}
