#if canImport(Glibc)
    import Glibc
#endif

/// The one check of a directory Latchkey trusts with what it keeps there: the vault's, the
/// agent's socket directory, a socket's parent named on the command line, the demo's private
/// directory. Each asks one of three things of it (`Requirement`); the check is made on a
/// descriptor of the directory itself (`O_PATH | O_DIRECTORY`, then `fstat`), so what is judged is
/// what the path named at that moment, and with `followingLinks: false` a symbolic link in its
/// place is refused rather than followed. Callers word the refusal for their own readers.
public enum TrustedDirectory {
    public enum Requirement: Sendable, Equatable {
        /// Nobody else may even open it (group and others have no access): the agent's socket
        /// directory, the demo's.
        case privateToYou
        /// Yours, and nobody else may add, remove or replace entries: the vault's directory.
        case changedOnlyByYou
        /// Yours or root's, and nobody else may replace your entries: not writable by others,
        /// unless sticky (`/tmp`, where only an entry's owner may remove or rename it).
        case keepsYourEntries
    }

    public enum Problem: Sendable, Equatable {
        /// It cannot be opened (`errno`): missing, a link when links are not followed, no search permission.
        case unreadable(errno: Int32)
        case notADirectory
        /// Another user's (`mode` as for `tooOpen`, for the message).
        case ownedBy(uid: UInt32, mode: UInt32)
        /// Its mode gives others what `requirement` forbids (permission bits with set-id and sticky).
        case tooOpen(mode: UInt32)
    }

    /// Why `path` does not meet `requirement`, or `nil` when it does.
    public static func problem(_ path: String, _ requirement: Requirement, followingLinks: Bool = true) -> Problem? {
        // O_PATH needs no permission on the directory itself; with O_NOFOLLOW a link is opened as
        // itself, and fstat says it is no directory.
        let descriptor = open(path, openPath | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { return .unreadable(errno: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .unreadable(errno: errno) }
        return problem(info, requirement)
    }

    /// Linux's `O_PATH` (a descriptor that names a file without opening it for reading), which
    /// Glibc's Swift module leaves out (it is behind `_GNU_SOURCE`).
    private static let openPath: Int32 = 0o10_000_000

    /// `info` (of an opened directory) against `requirement`.
    static func problem(_ info: stat, _ requirement: Requirement) -> Problem? {
        guard info.st_mode & S_IFMT == S_IFDIR else { return .notADirectory }
        let mode = UInt32(info.st_mode & 0o7777)
        switch requirement {
        case .privateToYou:
            guard info.st_uid == geteuid() else { return .ownedBy(uid: info.st_uid, mode: mode) }
            guard mode & 0o077 == 0 else { return .tooOpen(mode: mode) }
        case .changedOnlyByYou:
            guard info.st_uid == geteuid() else { return .ownedBy(uid: info.st_uid, mode: mode) }
            guard mode & 0o022 == 0 else { return .tooOpen(mode: mode) }
        case .keepsYourEntries:
            guard info.st_uid == geteuid() || info.st_uid == 0 else { return .ownedBy(uid: info.st_uid, mode: mode) }
            guard mode & 0o022 == 0 || mode & UInt32(S_ISVTX) != 0 else { return .tooOpen(mode: mode) }
        }
        return nil
    }
}
