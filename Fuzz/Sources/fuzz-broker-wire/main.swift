// A line of the broker's protocol (LatchkeyBrokerWire/BrokerWire.swift): a request as the agent
// reads it from a client, a forwarded host's included (BrokerRequest.decode), and an answer as a
// client reads it from the agent (BrokerAnswer.decode). What is read must write back as one line
// that reads as the same request or answer; a mismatch is told without a control character.
internal import FuzzSupport
internal import LatchkeyBrokerWire

/// `written` is one line, newline included.
func checkOneLine(_ written: [UInt8]) {
    precondition(written.last == 0x0A && !written.dropLast().contains(0x0A), "a message written as other than one line")
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let line = fuzzInput(data, size)
    var mismatches: [WireMismatch] = []
    do {
        let (request, client) = try BrokerRequest.decode(line)
        let written: [UInt8]
        do { written = try request.line(client: client) } catch { preconditionFailure("a request read cannot be written: \(error)") }
        checkOneLine(written)
        let again = try? BrokerRequest.decode(written.dropLast())
        precondition(again?.request == request && again?.client == client, "a request written again reads otherwise")
        _ = request.isForForwardedHosts
    } catch {
        mismatches.append(error)
    }
    do {
        let answer = try BrokerAnswer.decode(line)
        let written: [UInt8]
        do { written = try answer.line() } catch { preconditionFailure("an answer read cannot be written: \(error)") }
        checkOneLine(written)
        precondition((try? BrokerAnswer.decode(written.dropLast())) == answer, "an answer written again reads otherwise")
        _ = answer.isFinal
    } catch {
        mismatches.append(error)
    }
    for mismatch in mismatches {
        let controls = mismatch.description.unicodeScalars.filter { $0.properties.generalCategory == .control }
        precondition(controls.isEmpty, "a control character in a mismatch")
    }
    return 0
}

runFuzzer(testOneInput)
