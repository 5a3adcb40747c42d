/// Reads a `text/event-stream` body (the HTML Living Standard, "Server-sent events", §9.2.6
/// "Interpreting an event stream") piece by piece as it arrives, giving each event once its blank
/// line has come: how an MCP server's Streamable HTTP answer carries its JSON-RPC messages.
///
/// Lines end with CRLF, LF or CR (a CR at the end of one piece and an LF at the start of the next
/// are one line end); a line starting with `:` is a comment; `field: value` loses one space after
/// the colon; `data` lines are joined with LF. A line or an event longer than `limit` bytes ends
/// the stream with `ServerSentEventParser.Overflow`: a hostile server sending an endless line
/// cannot make the proxy hold it all.
public struct ServerSentEventParser: Sendable {
    /// One dispatched event (§9.2.6 "dispatch the event").
    public struct Event: Sendable, Equatable {
        /// `event`: the type; `message` when the stream named none.
        public var type: String
        /// `data`, its lines joined with LF.
        public var data: String
        /// `id`: the last event ID the stream set, if any.
        public var lastEventID: String?

        public init(type: String = "message", data: String, lastEventID: String? = nil) {
            self.type = type
            self.data = data
            self.lastEventID = lastEventID
        }
    }

    /// A line or an event over the limit.
    public struct Overflow: Error, Equatable {
        public let limit: Int
    }

    /// The most bytes one line, or one event's data, may hold.
    public let limit: Int
    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var type = ""
    private var lastEventID: String?
    /// The previous piece ended with CR: an LF starting this one belongs to that line end.
    private var afterCR = false
    private var atStart = true

    public init(limit: Int) { self.limit = limit }

    /// The events `bytes` completes, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(Overflow) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D, 0x0A:
                afterCR = byte == 0x0D
                if let event = try endLine() { events.append(event) }
            default:
                guard line.count < limit else { throw Overflow(limit: limit) }
                line.append(byte)
            }
        }
        return events
    }

    /// Interprets the line read so far; a blank line dispatches the event.
    private mutating func endLine() throws(Overflow) -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        if atStart {
            // A UTF-8 byte order mark before the first line is not part of it.
            atStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        guard !line.isEmpty else { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let field = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[($0 + 1)...] } ?? []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        switch field {
        case "data":
            guard data.count + value.count + 1 <= limit else { throw Overflow(limit: limit) }
            data += value
            data.append(0x0A)
            hasData = true
        case "event":
            type = String(decoding: value, as: UTF8.self)
        case "id" where !value.contains(0):
            lastEventID = String(decoding: value, as: UTF8.self)
        default:
            // `retry` and unknown fields: nothing this reader acts on.
            break
        }
        return nil
    }

    private mutating func dispatch() -> Event? {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            type = ""
        }
        guard hasData else { return nil }
        return Event(
            type: type.isEmpty ? "message" : type, data: String(decoding: data.dropLast(), as: UTF8.self), lastEventID: lastEventID)
    }
}
