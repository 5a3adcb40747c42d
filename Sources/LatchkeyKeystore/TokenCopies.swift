import Foundation
import LatchkeyCrypto
import LatchkeyEssentials
import LatchkeyVault

/// Writes the kernel-keyring copies of valid access tokens (the accounts' own, and those narrowed
/// by `--resource`/`--scope`) that `latchkey token` reads on its fast path (see `TokenCopy` for
/// the layout and `TokenFastPath` for the reader).
///
/// Copies exist only while the vault is unlocked: each one lives no longer than the unlock and
/// no longer than its token, and `lock` drops them all. An account marked `confirm = true` gets
/// no copy, and is named in `WithheldAccounts` (kept beside the vault key, so it outlives dropped
/// copies) so the launcher does not answer it from the vault either: its token leaves only
/// through the agent or the full command, which ask a person.
/// The copies are rewritten from the records after every read or write of the vault, so a
/// refresh, a new account or a logout is reflected at once; a read of the very vault file the
/// copies were made from, under the same unlock, leaves them as they are.
package struct TokenCopies {
    let vaultPath: String
    /// Tokens larger than this stay in the vault only (the kernel's per-user quota is small).
    static let largestCopied = 16_000

    /// Replaces every copy with ones made from `records` but those at `withheld` and those of a
    /// provider missing from `policies`, valid until `unlockedUntil` at most. `policies` holds
    /// each provider's policy fingerprint (`PolicyFiles`) as the withholding was decided by; the
    /// launcher answers a copy only while its provider's files still have it.
    ///
    /// `vaultFile` is the file the records were read from or written to. When the copies in the
    /// keyring were all made from that same file under the same unlock, they are what this call
    /// would write, and they stay: rewriting them took three system calls per account and
    /// selector on every read (1,800 for 200 accounts, most of `latchkey status`).
    ///
    /// Returns `true` when it stored the withheld list anew (for `syncDirectories`).
    @discardableResult
    func sync(
        _ records: [AccountRecord], withholding withheld: Set<Int>, policies: [String: String], unlockedUntil: Date, vaultFile: [UInt8]?,
        now: Date = Date()
    ) -> Bool {
        let withheldAccounts = WithheldAccounts(records, withholding: withheld, policies: policies).payload
        let marker = vaultFile.map { Self.marker(vaultFile: $0, withheld: withheldAccounts, unlockedUntil: unlockedUntil) }
        let copiesCurrent = marker != nil && KernelKeyring.read(description: markerDescription) == marker
        let listCurrent = KernelKeyring.read(description: withheldDescription) == withheldAccounts
        if copiesCurrent && listCurrent { return false }
        let lifetime = Int(wholeSeconds: unlockedUntil.timeIntervalSince(now))
        // The list first, and on its own beside the vault key (see `WithheldAccounts`): it outlives
        // copies the kernel cut short or someone dropped, so the launcher still answers from the
        // vault. Not stored (the unlock is over, the quota is full): no list is left, and no copy.
        guard lifetime > 0, (try? KernelKeyring.store(withheldAccounts, description: withheldDescription, timeout: lifetime)) != nil
        else {
            drop()
            return false
        }
        if copiesCurrent { return true }
        guard
            let ring = try? KernelKeyring.replaceKeyring(description: TokenCopy.keyringDescription(vaultPath: vaultPath), timeout: lifetime)
        else {
            // No new keyring (the kernel refuses new keys: quota full): the old copies may hold a
            // signed-out account's token, so they go rather than stay stale. The list is this
            // vault's as it is now, so it stays.
            dropCopies()
            return true
        }
        var complete = true
        // Each copy made, by record: its account key, seconds to live, and the narrowing it holds.
        var copied: [Int: [(account: String, seconds: Int, narrowing: TokenNarrowing?)]] = [:]
        for (index, record) in records.enumerated() where !withheld.contains(index) && policies[record.provider] != nil {
            let tokens: [(TokenNarrowing?, Secret, issued: Date, expires: Date?)] =
                [(nil, record.accessToken, record.updatedAt, record.expiresAt)]
                + (record.narrowedTokens ?? []).map {
                    (TokenNarrowing(resource: $0.resource, scopes: $0.scopes), $0.accessToken, $0.issuedAt, $0.expiresAt)
                }
            for (position, (narrowing, secret, issued, expires)) in tokens.enumerated() {
                let seconds = Int(wholeSeconds: min(expires ?? unlockedUntil, unlockedUntil).timeIntervalSince(now))
                let token = Array(secret.exposedValue.utf8)
                guard seconds > 0, token.count <= Self.largestCopied else { continue }
                let account = position == 0 ? String(index) : "\(index)+\(position)"
                // The token's own times, not the copy's shorter life: the fast path judges the copy
                // by `TokenValidity`, as `isValid` judges the record.
                let copy = TokenCopy.Entry.token(
                    issuedAt: Int(wholeSeconds: issued.timeIntervalSince1970),
                    expiresAt: expires.map { Int(wholeSeconds: $0.timeIntervalSince1970) }, token: token, proofBound: record.isProofBound)
                complete =
                    store(
                        TokenCopy.encode(copy), description: TokenCopy.accountKeyDescription(vaultPath: vaultPath, account: account),
                        seconds: seconds, ring: ring) && complete
                copied[index, default: []].append((account, seconds, narrowing))
            }
        }
        for (selector, index) in Self.selectors(for: records) {
            guard let policy = policies[records[index].provider] else { continue }
            for copy in copied[index] ?? [] {
                let description =
                    copy.narrowing.map {
                        TokenCopy.narrowedKeyDescription(
                            vaultPath: vaultPath, selector: selector.description, resource: $0.resource, scopes: $0.scopes)
                    } ?? TokenCopy.selectorKeyDescription(vaultPath: vaultPath, selector: selector.description)
                complete =
                    store(
                        TokenCopy.encode(.alias(of: copy.account, policy: policy)), description: description, seconds: copy.seconds,
                        ring: ring)
                    && complete
            }
        }
        // Only a whole set of copies is marked: one the kernel cut short is made again next time.
        if let marker, complete {
            try? KernelKeyring.store(marker, description: markerDescription, timeout: lifetime, in: ring)
        }
        return true
    }

    /// Replaces the copies with those `records` allow under `releasePolicy` (no copy of an
    /// account a person must approve, nor of a provider whose policy files cannot be read), and
    /// config.toml's directory mappings (`directories`, with the identity of the file they were
    /// read from) beside them: what every keystore with launcher copies does after a read or write.
    func sync(
        _ records: [AccountRecord], releasePolicy: ReleasePolicy?, directories: (identity: String, accounts: DirectoryAccounts)?,
        unlockedUntil until: Date, vaultFile: [UInt8]?
    ) {
        // Of the files as they were before the policy was read from them: one changed meanwhile
        // makes the launcher pass the copies over, never trust them.
        var policies: [String: String] = [:]
        for provider in Set(records.map(\.provider)) { policies[provider] = releasePolicy?.fingerprint(ofProvider: provider) }
        let withheld = Set(records.indices.filter { releasePolicy?.needsApproval(records[$0]) == true })
        let renewed = sync(records, withholding: withheld, policies: policies, unlockedUntil: until, vaultFile: vaultFile)
        if let (identity, accounts) = directories {
            syncDirectories(DirectoryAccountsCopy.payload(accounts, identity: identity), unlockedUntil: until, renewing: renewed)
        }
    }

    /// `Keystore.keepAnswerForLauncher` for a keystore with launcher copies: kept unless a person
    /// must approve `record`'s tokens or its provider's policy files cannot be read.
    func keepAnswer(_ text: [UInt8], key: String, of record: AccountRecord, releasePolicy: ReleasePolicy?, usableUntil: Date) {
        guard let releasePolicy, !releasePolicy.needsApproval(record), let policy = releasePolicy.fingerprint(ofProvider: record.provider)
        else { return }
        keepAnswer(text, key: key, policy: policy, usableUntil: usableUntil)
    }

    /// Names the copies' origin: the vault file's SHA-256 (every write seals with a fresh nonce,
    /// so it changes with every write) with the accounts withheld and the policy files'
    /// fingerprints (a provider file or config.toml edited changes them, not the file), the unlock's end,
    /// which bounds every copy's lifetime, and the copies' format, so copies an older Latchkey
    /// wrote from the same file are made anew.
    static func marker(vaultFile: [UInt8], withheld: [UInt8], unlockedUntil: Date) -> [UInt8] {
        var origin = SHA256()
        origin.update(data: vaultFile)
        origin.update(data: withheld)
        let seconds = UInt64(clamping: Int(wholeSeconds: unlockedUntil.timeIntervalSince1970))
        return Array(origin.finalize()) + (0..<8).reversed().map { UInt8(truncatingIfNeeded: seconds >> (UInt64($0) * 8)) }
            + [TokenCopy.formatVersion]
    }

    /// Lives in the copies' keyring, so replacing or dropping the copies drops it too.
    private var markerDescription: String { TokenCopy.markerKeyDescription(vaultPath: vaultPath) }

    /// In the user keyring, not the copies' (`WithheldAccounts`).
    private var withheldDescription: String { WithheldAccounts.keyDescription(vaultPath: vaultPath) }

    /// Every selector a person could type for these records (`PROVIDER`, `PROVIDER:SUBJECT`,
    /// `PROVIDER:NAME`) that the full command resolves to exactly one record, with that record's
    /// index: the resolution `AccountSelector.select` uses, so the fast path never answers a
    /// selector the full command would call ambiguous or resolve to another account. An empty
    /// subject or name is left out: typed after the colon, it reads as the bare provider.
    static func selectors(for records: [AccountRecord]) -> [AccountSelector: Int] {
        var resolved: [AccountSelector: Int] = [:]
        // A selector only ever matches records of its provider: resolve within each provider.
        for (provider, indices) in Dictionary(grouping: records.indices, by: { records[$0].provider }) {
            let atProvider = indices.map { records[$0] }
            var candidates: Set<AccountSelector> = [AccountSelector(provider: provider)]
            for record in atProvider {
                for name in [record.subject, record.displayName].compactMap({ $0 }) where !name.isEmpty {
                    candidates.insert(AccountSelector(provider: provider, account: name))
                }
            }
            for selector in candidates {
                guard let position = try? selector.index(in: atProvider) else { continue }
                resolved[selector] = indices[position]
            }
        }
        return resolved
    }

    /// Keeps the launcher's copy of config.toml's directory mappings (`DirectoryAccountsCopy`)
    /// beside the withheld list, in the user keyring, until the unlock ends: like the list it is
    /// policy, not a token, and the launcher's answer from the vault needs it when the copies are
    /// gone. `payload` `nil` removes it, so the launcher answers nothing a mapping could change.
    /// `renewing`: `sync` stored the list anew (a new unlock end), so the copy's lifetime follows.
    func syncDirectories(_ payload: [UInt8]?, unlockedUntil: Date, renewing: Bool, now: Date = Date()) {
        let description = DirectoryAccountsCopy.keyDescription(vaultPath: vaultPath)
        let lifetime = Int(wholeSeconds: unlockedUntil.timeIntervalSince(now))
        guard let payload, lifetime > 0 else {
            KernelKeyring.remove(description: description)
            return
        }
        guard renewing || KernelKeyring.read(description: description) != payload else { return }
        if (try? KernelKeyring.store(payload, description: description, timeout: lifetime)) == nil {
            KernelKeyring.remove(description: description)
        }
    }

    /// Keeps `text`, a whole answer of the full command, under `key` in the copies' keyring until
    /// `usableUntil`, for the launcher to print as it is (`TokenCopy.Entry.answer`). Only into the
    /// keyring the copies are in now: it is replaced whenever the vault changes, so the answer
    /// goes with the records it came from (a logout, a refresh, `lock`). Best effort: without that
    /// keyring, or with the kernel refusing the key, the full command simply answers next time.
    func keepAnswer(_ text: [UInt8], key: String, policy: String, usableUntil: Date, now: Date = Date()) {
        let seconds = Int(wholeSeconds: usableUntil.timeIntervalSince(now))
        guard seconds > 0, text.count <= Self.largestCopied,
            let ring = KernelKeyring.keyring(description: TokenCopy.keyringDescription(vaultPath: vaultPath))
        else { return }
        let entry = TokenCopy.Entry.answer(usableUntil: Int(wholeSeconds: usableUntil.timeIntervalSince1970), policy: policy, text: text)
        _ = store(TokenCopy.encode(entry), description: key, seconds: seconds, ring: ring)
    }

    /// Drops every copy, the list of withheld accounts and the directory mappings (locking).
    func drop() {
        dropCopies()
        KernelKeyring.remove(description: withheldDescription)
        KernelKeyring.remove(description: DirectoryAccountsCopy.keyDescription(vaultPath: vaultPath))
    }

    private func dropCopies() {
        KernelKeyring.removeKeyring(description: TokenCopy.keyringDescription(vaultPath: vaultPath))
    }

    /// `false` when the kernel refused the key.
    private func store(_ payload: [UInt8], description: String, seconds: Int, ring: Int32) -> Bool {
        (try? KernelKeyring.store(payload, description: description, timeout: seconds, in: ring)) != nil
    }
}
