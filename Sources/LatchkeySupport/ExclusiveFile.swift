import Foundation

/// A file created anew, never replacing one (O_EXCL: no other writer's file is replaced between a
/// check and the write) nor following a link there, owner-only: the one way Latchkey writes a file
/// a person asked for (a provider file, a credential configuration).
package enum ExclusiveFile {
    package enum Problem: Error {
        case exists
        case cannotWrite(reason: String)
    }

    package static func create(_ file: String, text: String) throws(Problem) {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { throw .exists }
            throw .cannotWrite(reason: String(cString: strerror(errno)))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            unlink(file)
            throw .cannotWrite(reason: String(describing: error))
        }
    }
}
