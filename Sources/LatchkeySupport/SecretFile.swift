import CLatchkeySys
import Foundation
import LatchkeyEssentials
package import LatchkeyVault

/// A secret kept in a file of its own, on one line, that no one but its owner may read:
/// `LATCHKEY_PASSPHRASE_FILE` and a provider's `client_secret_file`.
package enum SecretFile {
    package struct Unusable: Error {
        /// Why, for the caller's error message; never the file's content.
        package var reason: String

        package init(reason: String) { self.reason = reason }
    }

    /// A passphrase, secret or key is a few KiB at most; more is not such a file.
    static let largestSize = 64 << 10

    /// The file's text less one line ending, read and checked on one descriptor
    /// (`VaultFile.read`, placed by the person): yours, a regular file, no access for group or
    /// others.
    package static func read(_ path: String) throws(Unusable) -> Secret {
        let bytes: [UInt8]
        switch VaultFile.read(path, largestSize: largestSize, placement: .placed) {
        case .success(let read?): bytes = read
        case .success(nil): throw Unusable(reason: String(cString: strerror(ENOENT)))
        case .failure(let problem): throw Unusable(reason: reason(problem, path: path))
        }
        guard var text = String(validating: bytes, as: UTF8.self) else { throw Unusable(reason: "it cannot be read as UTF-8 text") }
        // One line ending, LF or CRLF ("\r\n" is a single Character, so one removeLast drops both).
        if text.hasSuffix("\n") || text.hasSuffix("\r\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else { throw Unusable(reason: "it is empty") }
        return Secret(text)
    }

    private static func reason(_ problem: VaultFile.Problem, path: String) -> String {
        switch problem {
        case .accessibleByOthers: return "it is readable by other users; run `chmod 600 \(path)`"
        case .ownedByAnotherUser(let owner): return "it belongs to another user (uid \(owner)); keep your own copy, mode 600"
        case .notARegularFile(let kind): return "it is \(kind), not a regular file"
        case .tooLarge(let bytes): return "it holds \(bytes) bytes, more than such a file has (\(largestSize / 1024) KiB)"
        case .changedWhileRead: return "it changed while it was read"
        case .unreadable(let error): return String(cString: strerror(error))
        case .unsafeDirectory: return "its directory is not safe"
        }
    }
}
