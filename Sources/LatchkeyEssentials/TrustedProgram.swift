import CLatchkeySys

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a program, or a shared library a program loads, may run on this user's behalf: the
/// launcher's `latchkey-cli`, second-factor plugins, hooks, and the libraries `latchkey-cli` loads
/// at run time (`SystemLibrary`) all pass this check first.
///
/// The rule: the file is a regular file (and, for a program, executable), and it and every
/// directory and symbolic link met on the way to it belong to this user or root, and none of them
/// can be written by group or others. A sticky directory such as /tmp is accepted on the way
/// (others may add entries there but not replace ours, and the entry below it is checked to be
/// ours or root's), but not as the directory that holds the file: there others can add files
/// beside it, such as a `libcurl.so.4` that a program linked with `RUNPATH $ORIGIN` (SwiftPM's
/// default, and perhaps a plugin's) would load. Anyone else who could write one of them could run
/// their own code as this user, with a vault key or a first factor in reach.
///
/// The path is resolved here, one entry at a time from `/`, each opened (`O_PATH`, no link
/// followed) relative to the directory already checked and checked on its open descriptor;
/// symbolic links are followed by reading them, and the directories their targets pass through
/// are checked the same way. So what is checked is what was opened, and the descriptor returned
/// is the file itself: executing it (`exec(_:arguments:)`) runs exactly what was checked, whatever
/// is renamed meanwhile.
public struct TrustedProgram: ~Copyable {
    /// An `O_PATH` descriptor of the checked file, closed with the value.
    public let descriptor: Int32
    /// Its real path, every link resolved.
    public let path: String

    /// Why a program was refused; `path` is the entry at fault, as resolved so far.
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        case missing(path: String)
        case notExecutable(path: String)
        case notRegularFile(path: String)
        case anotherUsers(path: String, owner: UInt32)
        case writableByOthers(path: String, mode: UInt32)
        case unreadable(path: String, errno: Int32)
        case tooManyLinks(path: String)

        /// What is wrong, naming the entry, without advice (each caller has its own).
        public var description: String {
            switch self {
            case .missing(let path): return "\(path) does not exist"
            case .notExecutable(let path): return "\(path) is not an executable file"
            case .notRegularFile(let path): return "\(path) is not a regular file"
            case .anotherUsers(let path, let owner): return "\(path) belongs to another user (uid \(owner))"
            case .writableByOthers(let path, let mode):
                let sticky = mode & S_ISVTX != 0 ? ": sticky, but they can add files beside it" : ""
                return "\(path) is writable by other users (mode \(String(mode & 0o7777, radix: 8))\(sticky))"
            case .unreadable(let path, let error): return "\(path) cannot be read (\(String(cString: strerror(error))))"
            case .tooManyLinks(let path): return "\(path) goes through too many symbolic links"
            }
        }
    }

    /// What the file must be, beyond the rule every entry on its way follows.
    public enum Kind: Sendable {
        /// An executable regular file (`faccessat(X_OK)`).
        case program
        /// A regular file the dynamic loader maps (libraries need no execute permission).
        case sharedLibrary

        func refusal(_ path: String) -> Refusal {
            self == .program ? .notExecutable(path: path) : .notRegularFile(path: path)
        }
    }

    /// As the kernel's path resolution (MAXSYMLINKS).
    static let linkLimit = 40

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Resolves and checks `path` (relative to the working directory when not absolute).
    public static func open(_ path: String, as kind: Kind = .program) throws(Refusal) -> TrustedProgram {
        var pending = Array(path.split(separator: "/").reversed())
        if !path.hasPrefix("/") {
            guard let directory = PhysicalDirectory.current() else { throw .unreadable(path: path, errno: errno) }
            pending += directory.split(separator: "/").reversed()
        }
        // The directories from `/` to where the resolution is, each open and already checked.
        var directories: [(descriptor: Int32, path: String, mode: mode_t)] = []
        defer { directories.forEach { close($0.descriptor) } }
        func startAtRoot() throws(Refusal) {
            directories.forEach { close($0.descriptor) }
            directories = []
            let root = lk_open_entry(AT_FDCWD, "/")
            guard root >= 0 else { throw .unreadable(path: "/", errno: errno) }
            directories.append((root, "/", try check(root, path: "/")))
        }
        try startAtRoot()
        var links = 0
        while let name = pending.popLast() {
            if name == "." { continue }
            if name == ".." {
                if directories.count > 1 { close(directories.removeLast().descriptor) }
                continue
            }
            let parent = directories[directories.count - 1]
            let entryPath = (parent.path == "/" ? "" : parent.path) + "/" + name
            let entry = lk_open_entry(parent.descriptor, String(name))
            guard entry >= 0 else {
                throw errno == ENOENT ? .missing(path: entryPath) : .unreadable(path: entryPath, errno: errno)
            }
            let mode: mode_t
            do {
                mode = try check(entry, path: entryPath)
            } catch {
                close(entry)
                throw error
            }
            let type = mode & S_IFMT
            switch type {
            case S_IFDIR:
                directories.append((entry, entryPath, mode))
            case S_IFLNK:
                var target = [CChar](repeating: 0, count: 4097)
                let length = readlinkat(entry, "", &target, target.count - 1)
                close(entry)
                links += 1
                guard length > 0, links <= linkLimit else {
                    throw links > linkLimit ? .tooManyLinks(path: path) : .unreadable(path: entryPath, errno: errno)
                }
                let text = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                pending += text.split(separator: "/").reversed()
                if text.hasPrefix("/") { try startAtRoot() }
            default:
                guard pending.allSatisfy({ $0 == "." }) else {
                    close(entry)
                    throw .unreadable(path: entryPath, errno: ENOTDIR)
                }
                // Checked relative to its directory, which only this user or root can change.
                guard type == S_IFREG, kind == .sharedLibrary || faccessat(parent.descriptor, String(name), X_OK, 0) == 0 else {
                    close(entry)
                    throw kind.refusal(entryPath)
                }
                // Sticky or not, a directory others can write is not where the file may live.
                guard parent.mode & 0o022 == 0 else {
                    close(entry)
                    throw .writableByOthers(path: parent.path, mode: parent.mode & 0o7777)
                }
                return TrustedProgram(descriptor: entry, path: entryPath)
            }
        }
        throw kind.refusal(directories.last?.path ?? path)
    }

    /// The entry's type and mode (`st_mode`), once its owner and mode pass the rule.
    private static func check(_ descriptor: Int32, path: String) throws(Refusal) -> mode_t {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .unreadable(path: path, errno: errno) }
        guard info.st_uid == geteuid() || info.st_uid == 0 else { throw .anotherUsers(path: path, owner: info.st_uid) }
        let type = info.st_mode & S_IFMT
        // A link's own mode bits mean nothing (always 777): its owner and directory are what count.
        let sticky = type == S_IFDIR && info.st_mode & S_ISVTX != 0
        guard type == S_IFLNK || sticky || info.st_mode & 0o022 == 0 else {
            throw .writableByOthers(path: path, mode: info.st_mode & 0o7777)
        }
        return info.st_mode
    }

    /// Replaces this process with the checked program (`execveat` on its descriptor, not its
    /// path). Returns only on failure, with the errno value.
    public func exec(arguments: [String]) -> Int32 {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { argv.forEach { free($0) } }
        return lk_exec_descriptor(descriptor, &argv)
    }
}
