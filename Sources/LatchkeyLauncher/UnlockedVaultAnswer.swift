public import FoundationEssentials
import LatchkeyBrokerWire
import LatchkeyEssentials
package import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// What the launcher answers from the vault itself, opened with the key an unlock left in the
/// kernel keyring, so that these commands never load `latchkey-cli`:
///
/// - `token SELECTOR [--min-ttl N]` when the keyring holds no copy of the token (right after
///   `unlock`, or when the key quota cut the copies short), the token needs no refresh and its
///   account is not marked `confirm = true` (`WithheldAccounts`);
/// - `status --json`, which needs nothing but the records.
///
/// It reads the same file with the same checks (`VaultFile`), decodes the same records and
/// applies the same selection, validity and report code as the full command, because those live
/// in this module and below, and the full command calls them too; so it never prints what the full
/// command would not. All else returns `nil` and the full command answers: a locked vault (it asks
/// for the passphrase), a token to refresh, a selector it would refuse (with its message), a
/// damaged or unsafe file. It writes nothing: the token copies are the full command's to make.
public enum UnlockedVaultAnswer {
    /// Prints the answer and returns the exit status, or `nil` to let the full command answer.
    /// `directory`'s mappings mark the accounts they choose in `status --json`, as the full command marks them.
    public static func run(_ request: LauncherRequest, in directory: LauncherDirectory? = nil, now: Date = Date()) -> Int32? {
        // The keystore config.toml chose keeps no vault (openbao): nothing here to open.
        if case .openBao = directory?.origin { return nil }
        switch request {
        case .statusJSON: return status(now: now, here: directory?.here)
        case .token(let selector, let minimumLifetime, let narrowing):
            return token(selector, narrowing: narrowing, minimumLifetime: minimumLifetime, now: now)
        case .mcpHeaders, .awsCredential:
            // From the copies only (`TokenFastPath`): the token copy knows whether the token is
            // bound, and only the full command calls STS.
            return nil
        }
    }

    /// Not for an account marked `confirm = true`, nor when the full command has not said which
    /// ones are (`WithheldAccounts`), said it of other accounts than the vault's, or said it of
    /// policy files that changed since.
    private static func token(_ selector: AccountSelector, narrowing: TokenNarrowing?, minimumLifetime: Int, now: Date) -> Int32? {
        let vault = vaultPath()
        guard let withheld = WithheldAccounts.current(vaultPath: vault), let records = UnlockedVault.records(at: vault),
            withheld.judged(records), let index = try? selector.index(in: records), !withheld.contains(records[index]),
            let policy = withheld.policy(of: records[index].provider),
            policy == PolicyFiles.currentFingerprint(ofProvider: records[index].provider, { getenv($0).map { String(cString: $0) } })
        else { return nil }
        let record = records[index]
        let margin = TimeInterval(minimumLifetime)
        let token: Secret
        if let narrowing {
            guard let narrowed = record.narrowedTokens?.first(where: narrowing.matches), narrowed.isValid(at: now, margin: margin)
            else { return nil }
            token = narrowed.accessToken
        } else {
            guard record.isValid(at: now, margin: margin) else { return nil }
            token = record.accessToken
        }
        var line = Array(token.exposedValue.utf8) + [UInt8(ascii: "\n")]
        defer { line.zeroize() }
        return printed(line) ? 0 : nil
    }

    private static func status(now: Date, here: (accounts: DirectoryAccounts, path: String)?) -> Int32? {
        guard let records = UnlockedVault.records(at: vaultPath()),
            let json = try? StatusReport(records: records, keystore: VaultFormat.keystoreName, now: now, here: here).json()
        else { return nil }
        return printed(Array((json + "\n").utf8)) ? 0 : nil
    }

    private static func vaultPath() -> String {
        VaultFile.defaultPath { name in getenv(name).map { String(cString: $0) } }
    }

    /// One `write`: a pipe closed early leaves nothing half-printed for the full command to repeat.
    private static func printed(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) } == bytes.count
    }
}

/// The vault's records read with the key an unlock cached, never asking for a passphrase.
package enum UnlockedVault {
    /// `nil` when the vault is locked, fails `VaultFile`'s checks, or does not open with the key.
    package static func records(at path: String) -> [AccountRecord]? {
        guard case .success(var bytes?) = VaultFile.read(path) else { return nil }
        defer { bytes.zeroize() }
        guard let parsed = try? VaultFormat.parse(bytes), let key = VaultKeyCache(vaultPath: path).key(for: parsed.header),
            var plaintext = try? VaultFormat.open(sealed: parsed.sealed, headerBytes: parsed.headerBytes, key: key)
        else { return nil }
        defer { plaintext.zeroize() }
        return try? VaultContents.decode(plaintext)
    }
}
