package import CLatchkeySys
import Foundation
public import LatchkeyEssentials
public import LatchkeyVault

/// Why a file Latchkey keeps could not be written, created or locked. Each room that keeps
/// files says it in its own error (`KeystoreError.init(_:)`); the reason never holds the file's
/// contents.
public enum FileError: LatchkeyError, Equatable {
    case io(path: String, reason: String)
    /// The file or its directory is not one Latchkey may trust (`VaultFile.Problem`).
    case refused(VaultFile.Problem, path: String)

    public var category: FailureCategory { .keystore }

    public var description: String {
        switch self {
        case .io(let path, let reason):
            return "cannot access \(path): \(reason)"
        case .refused(.unsafeDirectory(let directory, _, let owner?), _):
            return "\(directory) belongs to another user (uid \(owner)), who could replace files in it; use a directory of your own"
        case .refused(.unsafeDirectory(let directory, let mode, nil), _):
            return
                "\(directory) can be written by other users (mode \(String(mode, radix: 8))), who could replace files in it; run `chmod 700 \(directory)`, then retry"
        case .refused(.accessibleByOthers(let mode), let path):
            return "\(path) is accessible by other users (mode \(String(mode, radix: 8))); run `chmod 600 \(path)`, then retry"
        case .refused(.ownedByAnotherUser(let owner), let path):
            return "\(path) belongs to another user (uid \(owner)); move it aside, then retry"
        case .refused(.notARegularFile(let kind), let path):
            return "\(path) is \(kind), not a regular file; move it aside, then retry"
        case .refused(.tooLarge(let bytes), let path):
            return "\(path) is \(bytes) bytes, larger than any file Latchkey writes; move it aside, then retry"
        case .refused(.changedWhileRead, let path):
            return "cannot access \(path): it grew while being read (something writes into it); retry"
        case .refused(.unreadable(let error), let path):
            return "cannot access \(path): \(String(cString: strerror(error)))"
        }
    }
}

/// Replaces a file so that a crash at any instant leaves either the old or the new contents.
package enum AtomicFile {
    /// Temp file in the same directory (rename is atomic only within a file system), fsync,
    /// rename, then fsync of the directory so the rename itself survives a power cut.
    package static func replace(_ path: String, with bytes: [UInt8], mode: mode_t = 0o600) throws(FileError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = "\(directory)/.\((path as NSString).lastPathComponent).tmp-\(getpid())-\(SecureRandom.token(byteCount: 6))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw .io(path: temporary, reason: String(cString: strerror(errno))) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw .io(path: temporary, reason: reason)
            }
            written += count
        }
        guard fsync(descriptor) == 0, close(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .io(path: temporary, reason: reason)
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .io(path: path, reason: reason)
        }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}

extension AtomicFile {
    /// Creates `directory` (0700) when missing; an existing one must not be writable by others
    /// or belong to another user, who could replace `file` in it.
    package static func ensureDirectory(_ directory: String, of file: String) throws(FileError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            if let problem = VaultFile.directoryProblem(directory) { throw FileError.refused(problem, path: file) }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io(path: directory, reason: "cannot create the directory: \(error.localizedDescription)")
        }
    }
}

/// An exclusive `flock` on a lock file, held across processes until released.
///
/// Taking it never blocks a thread: tasks of this process queue on an in-process lock first,
/// and the one at the head polls `flock(LOCK_NB)` with a short sleep. A blocking `flock` would
/// park threads of Swift's small cooperative pool, and a holder awaiting the network (a refresh)
/// could then never be resumed.
package struct FileLock {
    private let descriptor: Int32
    private let inProcess: AsyncLock

    package static func acquire(path: String) async throws(FileError) -> FileLock {
        let inProcess = AsyncLock.forPath(path)
        await inProcess.lock()
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            inProcess.unlock()
            throw .io(path: path, reason: String(cString: strerror(errno)))
        }
        var pause = Duration.milliseconds(2)
        while lk_flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                inProcess.unlock()
                throw .io(path: path, reason: "cannot lock: \(reason)")
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        return FileLock(descriptor: descriptor, inProcess: inProcess)
    }

    package func release() {
        _ = lk_flock(descriptor, LOCK_UN)
        close(descriptor)
        inProcess.unlock()
    }
}
