import CLatchkeySys
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a configuration file (a provider file, config.toml) that may be anything a path can
/// name: only a regular file of at most `maximumBytes` is read, so a FIFO cannot hang a command
/// and a huge or sparse file cannot exhaust its memory.
package enum TextFile {
    package enum Problem: Error, Equatable {
        case missing
        case unreadable(String)
        case notRegular
        case tooLarge(limit: Int)
        case notUTF8

        /// Said after the file's path.
        package var message: String {
            switch self {
            case .missing: return "does not exist"
            case .unreadable(let reason): return "cannot be read (\(reason))"
            case .notRegular: return "is not a regular file (a directory, a FIFO or a device?)"
            case .tooLarge(let limit): return "is larger than \(limit >> 10) KiB; provider files and config.toml are a few KB"
            case .notUTF8: return "cannot be read as UTF-8 text"
            }
        }
    }

    package static func read(_ path: String, maximumBytes: Int = TOMLPreflight.maximumBytes) -> Result<String, Problem> {
        // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            return .failure(errno == ENOENT ? .missing : .unreadable(String(cString: strerror(errno))))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .failure(.unreadable(String(cString: strerror(errno)))) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.notRegular) }
        guard info.st_size <= maximumBytes else { return .failure(.tooLarge(limit: maximumBytes)) }
        var bytes = [UInt8](repeating: 0, count: maximumBytes + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return .failure(.unreadable(String(cString: strerror(errno)))) }
            if count == 0 { break }
            filled += count
        }
        // A file that grew past the limit while it was read is refused like a large one.
        guard filled <= maximumBytes else { return .failure(.tooLarge(limit: maximumBytes)) }
        guard let text = String(validating: bytes[0..<filled], as: UTF8.self) else { return .failure(.notUTF8) }
        return .success(text)
    }
}
