import Foundation
import LatchkeySupport

/// The KV versions of the accounts the `openbao` keystore's launcher copies were last made from,
/// kept in a file beside the journal, so that copies are never replaced by ones made from an
/// older read.
///
/// Reading every account of the path takes many round trips, outside any lease. A command whose
/// read began before another command's write and ends after it would otherwise make the copies
/// from the records before that write: a logged-out account's token, or one a server refused
/// and another command just replaced. KV versions only grow, so "older" is exact: a read is
/// older when the file holds a later version of any account than it read. The comparison and the
/// copies are made under an exclusive lock on the file, so two commands cannot both pass the
/// check and then write in the wrong order.
package struct CopiesVersions: Sendable {
    /// The file: one `NAME VERSION` line per account secret (names are hashes, versions numbers:
    /// nothing secret).
    let path: String

    /// Runs `makeCopies` and keeps `versions` (each account secret's version as read; removed
    /// ones too) unless the file holds a later version of some account; `false` when it did not
    /// run. A file that cannot be opened or read does not stop the copies: they are made as
    /// before this file existed.
    func unlessOlder(_ versions: [String: Int], _ makeCopies: () -> Void) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        try? AtomicFile.ensureDirectory(directory, of: path)
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            makeCopies()
            return true
        }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else {
            makeCopies()
            return true
        }
        let kept = Self.parse(Self.contents(of: descriptor))
        if kept.contains(where: { name, version in (versions[name] ?? 0) < version }) { return false }
        makeCopies()
        let text = Array(versions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)\n" }.joined().utf8)
        if ftruncate(descriptor, 0) == 0 { _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) } }
        return true
    }

    /// The versions in `text`; a line that is not `NAME VERSION` (a write cut short) is skipped.
    static func parse(_ text: String) -> [String: Int] {
        var versions: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let version = Int(fields[1]) else { continue }
            versions[String(fields[0])] = version
        }
        return versions
    }

    private static func contents(of descriptor: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
            offset += off_t(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
