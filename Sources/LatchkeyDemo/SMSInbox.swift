public import Foundation
import Synchronization

/// The demo's phone: every SMS the Identity Toolkit emulator "sends", newest last, so the whole
/// second factor is done in the terminal.
public final class SMSInbox: Sendable {
    private let messages = Mutex<[String]>([])
    private let listener = Mutex<(@Sendable ([String]) -> Void)?>(nil)
    private let clock: @Sendable () -> Date

    public init(clock: @escaping @Sendable () -> Date = { Date() }) { self.clock = clock }

    /// Everything received so far, oldest first, each line stamped with its time of arrival.
    public var all: [String] { messages.withLock { $0 } }

    /// Calls `body` with the whole inbox whenever a message arrives (and once now).
    public func onChange(_ body: @escaping @Sendable ([String]) -> Void) {
        listener.withLock { $0 = body }
        body(all)
    }

    /// Takes one line of the emulator's log; only its SMS lines ("To sign in using +1…, use the
    /// code 123456.") are messages.
    func receive(_ line: String) {
        guard line.contains("use the code") else { return }
        let stamp = Self.timeFormat.string(from: clock())
        let now = messages.withLock { messages in
            messages.append("\(stamp)  \(line)")
            if messages.count > 20 { messages.removeFirst(messages.count - 20) }
            return messages
        }
        listener.withLock { $0 }?(now)
    }

    private static var timeFormat: DateFormatter {
        let format = DateFormatter()
        format.dateFormat = "HH:mm:ss"
        return format
    }
}
