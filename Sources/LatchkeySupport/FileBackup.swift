package import Foundation

/// A copy of a file a command is about to change (`kubeconfig --write`, `aws-config --write`),
/// at `FILE.latchkey-backup-YYYYMMDDTHHMMSSZ`, owner-only (such files can hold keys and tokens)
/// and never replacing an existing file.
package enum FileBackup {
    package struct Failure: Error, Equatable {
        /// The file that could not be read or the backup that could not be written.
        package var path: String
        package var reason: String
    }

    /// Copies `file`; returns the backup's path.
    package static func copy(_ file: String, now: Date) throws(Failure) -> String {
        let contents: Data
        do {
            contents = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw Failure(path: file, reason: "cannot read it")
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let stem = "\(file).latchkey-backup-\(formatter.string(from: now))"
        for attempt in 1...100 {
            let path = attempt == 1 ? stem : "\(stem).\(attempt)"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if descriptor < 0 {
                if errno == EEXIST { continue }
                throw Failure(path: path, reason: String(cString: strerror(errno)))
            }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            do {
                try handle.write(contentsOf: contents)
                try handle.synchronize()
            } catch {
                unlink(path)
                throw Failure(path: path, reason: "cannot write it")
            }
            return path
        }
        throw Failure(path: stem, reason: "a hundred backups from this second already exist")
    }
}
