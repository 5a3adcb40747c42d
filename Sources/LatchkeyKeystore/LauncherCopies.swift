public import Foundation
public import LatchkeyEssentials
public import LatchkeyVault

/// The launcher's token copies (`TokenCopies`) for a keystore with no key to cache: the
/// `openbao` keystore, which asks no passphrase. `unlock --for` opens a window, kept in the
/// kernel keyring; while it is open every read and write of the keystore makes the copies anew
/// from the records it saw, each living no longer than its token and the window, as the vault's
/// live no longer than its unlock; `lock` closes the window and drops them.
///
/// Without `unlock` no copy is made: the launcher answers without asking OpenBao, so it neither
/// appears in OpenBao's audit log nor sees what another machine did to the account since (a
/// logout there cannot reach this machine's keyring); the person opts in to that, for a while.
public struct LauncherCopies: Sendable {
    /// The path the copies are named with (`CopiesOrigin.location`).
    let location: String
    /// The accounts whose tokens are never copied (`confirm = true`).
    let releasePolicy: ReleasePolicy?
    /// config.toml's directory mappings with the identity of the file they were read from: the
    /// launcher answers only while config.toml is that file (`CopiesOrigin`).
    let directories: (identity: String, accounts: DirectoryAccounts)?

    public init(
        origin: CopiesOrigin, releasePolicy: ReleasePolicy?, directories: (identity: String, accounts: DirectoryAccounts)?
    ) {
        location = origin.location
        self.releasePolicy = releasePolicy
        self.directories = directories
    }

    private var copies: TokenCopies { TokenCopies(vaultPath: location) }

    /// The window's end, kept under its own key in the user keyring with the kernel's timeout.
    private var windowDescription: String { "latchkey:copies-until:" + location }

    /// When the window closes, or `nil` when it is closed.
    public var unlockedUntil: Date? {
        guard let payload = KernelKeyring.read(description: windowDescription), payload.count == 8 else { return nil }
        let seconds = Int64(bitPattern: payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let end = Date(timeIntervalSince1970: TimeInterval(seconds))
        return end > Date() ? end : nil
    }

    /// Opens the window for `duration` and makes the copies from what `records` reads (the
    /// keystore's `records()`, which syncs them); when that fails, the window is closed again
    /// and the failure thrown (OpenBao cannot be reached: nothing to copy).
    public func unlock(for duration: TimeInterval, records: () async throws -> Void) async throws -> Date {
        let end = Date().addingTimeInterval(duration)
        let seconds = UInt64(Int(wholeSeconds: end.timeIntervalSince1970))
        do {
            try KernelKeyring.store(
                (0..<8).reversed().map { UInt8(truncatingIfNeeded: seconds >> (UInt64($0) * 8)) }, description: windowDescription,
                timeout: Int(wholeSeconds: duration))
            try await records()
        } catch {
            lock()
            throw error
        }
        return end
    }

    /// Closes the window and drops every copy; `true` when the window was open.
    @discardableResult
    public func lock() -> Bool {
        copies.drop()
        return KernelKeyring.remove(description: windowDescription)
    }

    /// The versions the copies were last made from (`CopiesVersions`), beside the journal.
    private var versions: CopiesVersions {
        CopiesVersions(path: (location as NSString).deletingLastPathComponent + "/openbao-copies.versions")
    }

    /// Makes the copies from `records`, what the keystore holds at `versions` (each account
    /// secret's KV version as read), while the window is open, unless copies from a later read
    /// are there already; `false` then (the caller may read again).
    func sync(_ records: [AccountRecord], versions read: [String: Int]) -> Bool {
        guard let until = unlockedUntil else { return true }
        return versions.unlessOlder(read) {
            // No file to name their origin: they are made anew each time (a few keys per account).
            copies.sync(records, releasePolicy: releasePolicy, directories: directories, unlockedUntil: until, vaultFile: nil)
        }
    }

    /// `Keystore.keepAnswerForLauncher`, while the window is open (into the copies' keyring, which
    /// exists only then).
    func keepAnswer(_ text: [UInt8], key: (_ location: String) -> String, of record: AccountRecord, until: Date) {
        copies.keepAnswer(text, key: key(location), of: record, releasePolicy: releasePolicy, usableUntil: until)
    }
}
