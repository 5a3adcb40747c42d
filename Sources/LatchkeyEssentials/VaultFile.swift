import CLatchkeySys

#if canImport(Glibc)
    import Glibc
#endif

/// What the vault file and its directory must be before anything reads them, in one place for
/// the launcher's token copies, the launcher's own reading of the vault and the full command.
///
/// The directory: yours and writable by nobody else, since write access to a directory is enough
/// to rename another vault over ours. The file: a regular file (not a symbolic link: every save
/// renames a new file over the path, which would replace the link anyway; not a FIFO, which
/// would block the reader), yours, readable by nobody else (others could copy it and try
/// passphrases offline), and no larger than `largestSize`, so a huge sparse file is refused
/// before anything is allocated for it.
public enum VaultFile {
    /// Who put a private file where it is, which decides what its path may go through.
    public enum Placement: Sendable {
        /// Latchkey writes it (the vault, caches): in a directory of yours that nobody else can
        /// write, and never through a symbolic link.
        case kept
        /// The person named it (`LATCHKEY_PASSPHRASE_FILE`, `client_secret_file`): wherever
        /// they chose (/run/secrets is root's; Kubernetes mounts secrets through links), the
        /// file itself checked on the descriptor that reads it.
        case placed
    }

    /// 64 MiB: hundreds of times what 200 accounts take (about 300 KB); the full command refuses
    /// to save more, so it never writes a vault it would then refuse to read.
    public static let largestSize = 64 << 20

    public enum Problem: Error, Equatable, Sendable {
        /// The directory can be written by others (`owner` nil) or belongs to another user.
        case unsafeDirectory(path: String, mode: UInt32, owner: UInt32?)
        /// Group or others have some permission on the file.
        case accessibleByOthers(mode: UInt32)
        case ownedByAnotherUser(owner: UInt32)
        /// What it is instead: "a FIFO", "a directory", "a symbolic link"…
        case notARegularFile(String)
        case tooLarge(bytes: Int)
        /// More bytes came than `fstat` reported: someone writes into it in place.
        case changedWhileRead
        case unreadable(errno: Int32)
    }

    /// `DATA/latchkey/vault` ($XDG_DATA_HOME or ~/.local/share).
    public static func defaultPath(_ lookup: (String) -> String?) -> String {
        XDGDirectories.data(lookup) + "/vault"
    }

    /// The directory holding `path`.
    public static func directory(of path: String) -> String {
        RunningExecutable.parent(of: path).map { $0.isEmpty ? "/" : $0 } ?? "."
    }

    /// Whether a vault is at `path` (`false` when there is none yet), checked without opening
    /// it; for the token copies, which never read it, and `latchkey doctor`.
    public static func check(_ path: String) -> Result<Bool, Problem> {
        if let problem = directoryProblem(directory(of: path)) { return .failure(problem) }
        var info = stat()
        guard lstat(path, &info) == 0 else { return errno == ENOENT ? .success(false) : .failure(.unreadable(errno: errno)) }
        if let problem = problem(info) { return .failure(problem) }
        return .success(true)
    }

    /// The vault's bytes, or `nil` when there is none yet (`read(_:largestSize:)`).
    public static func read(_ path: String) -> Result<[UInt8]?, Problem> { read(path, largestSize: largestSize) }

    /// The bytes of a private file, or `nil` when there is none: the one check for every file
    /// Latchkey keeps or reads secrets from (the vault, the passphrase, client secret and key
    /// files, the discovery cache), with the rules above and `largestSize` of its own. Checked on
    /// the open descriptor, which is opened without following a link or waiting for a writer (a
    /// FIFO), so a file swapped in after the path was checked is refused too.
    public static func read(_ path: String, largestSize: Int, placement: Placement = .kept) -> Result<[UInt8]?, Problem> {
        if placement == .kept, let problem = directoryProblem(directory(of: path)) { return .failure(problem) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (placement == .kept ? O_NOFOLLOW : 0))
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOENT { return .success(nil) }
            var info = stat()
            if error == ELOOP, lstat(path, &info) == 0, let problem = problem(info, largestSize: largestSize) { return .failure(problem) }
            return .failure(.unreadable(errno: error))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .failure(.unreadable(errno: errno)) }
        if let problem = problem(info, largestSize: largestSize) { return .failure(problem) }
        // One byte more than fstat said: a file that grows while it is read is noticed.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return .failure(.unreadable(errno: errno)) }
            if count == 0 { break }
            filled += count
        }
        guard filled < bytes.count else { return .failure(.changedWhileRead) }
        bytes.removeLast(bytes.count - filled)
        return .success(bytes)
    }

    /// What is wrong with the vault's directory, or `nil`; a directory that does not exist holds
    /// no vault, and is the full command's to create.
    public static func directoryProblem(_ directory: String) -> Problem? {
        switch TrustedDirectory.problem(directory, .changedOnlyByYou) {
        case .ownedBy(let owner, let mode)?: return .unsafeDirectory(path: directory, mode: mode & 0o777, owner: owner)
        case .tooOpen(let mode)?: return .unsafeDirectory(path: directory, mode: mode & 0o777, owner: nil)
        // Not there (or not a directory): the full command creates it, or fails to, saying why.
        case .unreadable?, .notADirectory?, nil: return nil
        }
    }

    /// The file's type, owner, mode and size against the rules above.
    static func problem(_ info: stat, largestSize: Int = VaultFile.largestSize) -> Problem? {
        guard info.st_mode & S_IFMT == S_IFREG else { return .notARegularFile(kind(info.st_mode)) }
        guard info.st_uid == geteuid() else { return .ownedByAnotherUser(owner: info.st_uid) }
        guard info.st_mode & 0o077 == 0 else { return .accessibleByOthers(mode: info.st_mode & 0o777) }
        guard info.st_size <= largestSize else { return .tooLarge(bytes: Int(info.st_size)) }
        return nil
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFLNK: return "a symbolic link"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "not a regular file"
        }
    }
}
