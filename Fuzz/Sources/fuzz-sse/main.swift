// An MCP server's `text/event-stream` body (LatchkeyMCP/ServerSentEventParser.swift), as the
// proxy reads it: in pieces as they arrive. The first byte picks where the body is cut in two and
// how long a line may be; the body fed whole, in those two pieces and byte by byte must give the
// same events (or the same overflow), and every event's data goes on as a JSON-RPC message would.
internal import FuzzSupport
internal import LatchkeyMCP

/// What feeding a body gave: its events in order, or the overflow that ended the stream.
enum Outcome: Equatable {
    case events([ServerSentEventParser.Event])
    case overflow(Int)
}

func feed(_ pieces: [ArraySlice<UInt8>], limit: Int) -> Outcome {
    var parser = ServerSentEventParser(limit: limit)
    var events: [ServerSentEventParser.Event] = []
    do {
        for piece in pieces { events += try parser.feed(piece) }
    } catch {
        precondition(error.limit == limit, "an overflow names another limit")
        return .overflow(error.limit)
    }
    return .events(events)
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let control = input.first else { return 0 }
    let body = input[1...]
    // A small limit reaches the overflow paths; the proxy's own is MCPProxy.messageLimit.
    let limit = control & 0x80 == 0 ? 1 << 16 : 16 + Int(control & 0x3F)
    let cut = body.startIndex + (body.isEmpty ? 0 : Int(control) % (body.count + 1))
    let whole = feed([body], limit: limit)
    precondition(feed([body[..<cut], body[cut...]], limit: limit) == whole, "a body cut in two gives other events than whole")
    precondition(feed(body.indices.map { body[$0...$0] }, limit: limit) == whole, "a body fed byte by byte gives other events")
    guard case .events(let events) = whole else { return 0 }
    for event in events {
        precondition(!event.type.isEmpty && !event.type.utf8.contains(0x0A) && !event.type.utf8.contains(0x0D), "a bad event type")
        precondition(!event.data.utf8.contains(0x0D), "a CR inside an event's data")
        precondition(event.lastEventID.map { !$0.utf8.contains(0) } ?? true, "an event ID holding NUL")
        _ = JSONRPCMessage(Array(event.data.utf8))
    }
    return 0
}

runFuzzer(testOneInput)
