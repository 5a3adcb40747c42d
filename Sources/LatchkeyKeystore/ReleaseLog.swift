import CLatchkeySys
public import Foundation
import LatchkeyEssentials
import LatchkeySupport
import LatchkeyVault
import Synchronization

/// `$XDG_STATE_HOME/latchkey/agent.log`: every token the agent released or refused, one JSON
/// object per line (time, account, requester, local or forwarded, outcome), never a token.
/// `latchkey agent log` prints it. At 1 MiB the file becomes `agent.log.1` (the one before it
/// goes), so the log never grows without bound.
public final class ReleaseLog: Sendable {
    public struct Entry: Codable, Sendable, Equatable {
        public enum Outcome: String, Codable, Sendable {
            case released
            /// A person said no.
            case denied
            /// Nobody answered within `confirm_timeout`.
            case unapproved = "not approved"
            /// The account is not forwarded, or its token could not be had (a refresh failed).
            case refused
        }

        public var time: Date
        /// `PROVIDER:ACCOUNT`.
        public var account: String
        public var requester: String
        public var forwarded: Bool
        public var outcome: Outcome
        /// Why it was refused, for `refused`.
        public var reason: String?

        public init(time: Date, account: String, requester: String, forwarded: Bool, outcome: Outcome, reason: String? = nil) {
            self.time = time
            self.account = account
            self.requester = requester
            self.forwarded = forwarded
            self.outcome = outcome
            self.reason = reason
        }

        /// One line for a terminal: time, outcome, account, where from, who.
        public var summary: String {
            let when = time.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false).timeSeparator(.colon))
            var text = "\(when)  \(outcome.rawValue)  \(TerminalText.sanitized(account, maxLength: 200))  "
            text += TerminalText.sanitized(requester, maxLength: 600)
            if let reason { text += "  (\(TerminalText.sanitized(reason, maxLength: 300)))" }
            return text
        }
    }

    /// Past this size the log is rotated.
    static let sizeLimit = 1 << 20

    public let path: String
    private let lock = Mutex(())

    public init(path: String) {
        self.path = path
    }

    /// `$XDG_STATE_HOME/latchkey/agent.log` (default `~/.local/state/latchkey/agent.log`).
    public static func defaultPath(environment: [String: String]) -> String {
        let state =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? ((environment["HOME"] ?? "/") + "/.local/state")
        return state + "/latchkey/agent.log"
    }

    /// Appends `entry`; a failure is returned for the agent to say, never thrown at a release.
    @discardableResult
    public func append(_ entry: Entry) -> String? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(entry) else { return "cannot encode a log entry" }
        let line = Array(data) + [UInt8(ascii: "\n")]
        return lock.withLock { _ in
            let directory = (path as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var info = stat()
            if stat(path, &info) == 0 && Int(info.st_size) + line.count > Self.sizeLimit { rename(path, path + ".1") }
            let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { return "cannot write \(path): \(String(cString: strerror(errno)))" }
            defer { close(descriptor) }
            let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            return written == line.count ? nil : "cannot write \(path): \(String(cString: strerror(errno)))"
        }
    }

    /// Every entry still kept, oldest first; lines that do not decode are skipped.
    public func entries() throws(KeystoreError) -> [Entry] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var entries: [Entry] = []
        for file in [path + ".1", path] {
            let text: String
            switch TextFile.read(file, maximumBytes: Self.sizeLimit * 2) {
            case .success(let read): text = read
            case .failure(.missing): continue
            case .failure(let problem): throw .io(path: file, reason: problem.message)
            }
            for line in text.split(separator: "\n") {
                if let entry = try? decoder.decode(Entry.self, from: Data(line.utf8)) { entries.append(entry) }
            }
        }
        return entries
    }
}
