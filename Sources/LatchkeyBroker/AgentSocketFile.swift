import CLatchkeySys
import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials

/// The agent's socket files: made only where nobody else can replace them, never over something
/// that is not a socket of this user's, and removed at exit only if still the one made.
enum AgentSocketFile {
    /// A listening socket and what its path was when bound.
    struct Bound: Sendable {
        var descriptor: Int32
        var path: String
        var device: UInt64
        var inode: UInt64
    }

    /// `$XDG_RUNTIME_DIR/latchkey`: made 0700, or, when it exists, a directory of this user's
    /// that nobody else can open. Another user's directory, or one open to group or others, is
    /// refused rather than changed: how it came to be so is for a person to find out.
    static func prepareDirectory(_ path: String) throws(AgentError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .unsafeDirectory(path: path, reason: String(cString: strerror(errno)))
        }
        if let problem = AgentSocket.privacyProblem(ofDirectory: path) { throw .unsafeDirectory(path: path, reason: problem) }
    }

    /// The directory of a socket named on the command line (`--socket`, `--forward-socket`): this user's or
    /// root's, and writable by nobody else unless sticky (where others cannot replace our entry).
    static func checkParent(of path: String) throws(AgentError) {
        let parent = (path as NSString).deletingLastPathComponent
        let reason: String
        switch TrustedDirectory.problem(parent.isEmpty ? "." : parent, .keepsYourEntries) {
        case nil: return
        case .unreadable(let error)?: reason = String(cString: strerror(error))
        case .notADirectory?: reason = "it is not a directory"
        case .ownedBy(let owner, _)?: reason = "it belongs to uid \(owner), who could replace the socket"
        case .tooOpen(let mode)?: reason = "others can write it (mode \(String(mode, radix: 8))) and could replace the socket"
        }
        throw .unsafeDirectory(path: parent, reason: reason)
    }

    /// Listens at `path`. An existing socket of this user's that nobody answers on (an agent
    /// killed without cleaning up) is replaced; anything else there is refused, and left alone.
    static func listen(at path: String) throws(AgentError) -> Bound {
        var info = stat()
        if lstat(path, &info) == 0 {
            let type = info.st_mode & S_IFMT
            guard type == S_IFSOCK else { throw .notOurSocket(path: path, reason: "exists and is not a socket (\(typeName(type)))") }
            guard info.st_uid == geteuid() else { throw .notOurSocket(path: path, reason: "is a socket of uid \(info.st_uid)") }
            let probe = lk_unix_connect(path)
            if probe >= 0 {
                close(probe)
                throw .alreadyRunning(path: path)
            }
            guard probe == -ECONNREFUSED, unlink(path) == 0 || errno == ENOENT else {
                throw .notOurSocket(path: path, reason: "cannot be replaced (\(String(cString: strerror(-probe))))")
            }
        } else if errno != ENOENT {
            throw .cannotListen(path: path, reason: String(cString: strerror(errno)))
        }
        let descriptor = lk_unix_listen(path, 64)
        guard descriptor >= 0 else {
            let reason =
                -descriptor == ENAMETOOLONG
                ? "the path is too long for a Unix socket (107 bytes at most)" : String(cString: strerror(-descriptor))
            throw .cannotListen(path: path, reason: reason)
        }
        guard lstat(path, &info) == 0 else {
            close(descriptor)
            throw .cannotListen(path: path, reason: String(cString: strerror(errno)))
        }
        return Bound(descriptor: descriptor, path: path, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Closes the socket, and removes its file if it is still the one `listen` made (another agent
    /// may have replaced a socket it found dead).
    static func remove(_ bound: Bound) {
        close(bound.descriptor)
        var info = stat()
        guard lstat(bound.path, &info) == 0, UInt64(info.st_dev) == bound.device, UInt64(info.st_ino) == bound.inode else { return }
        unlink(bound.path)
    }

    private static func typeName(_ type: mode_t) -> String {
        switch type {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        case S_IFIFO: return "a FIFO"
        default: return "a special file"
        }
    }
}
