import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyBroker
@testable import LatchkeyBrokerWire
@testable import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey agent` on real sockets: what a client that does not speak the protocol gets, what a
/// forwarded connection may not do, and a release a person approves from the local socket.
@Suite("The agent answers on its sockets")
struct AgentTests {
    /// Sends `line` on a new connection to `socket` as it is, and returns the agent's first answer.
    /// The socket is read on a thread of its own: a blocking read on one of Swift's few
    /// cooperative threads would starve the agent answering it.
    static func answer(toRawLine line: String, at socket: String) async throws -> BrokerAnswer {
        let outcome: Result<BrokerAnswer, any Error> = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Result { try exchange(line, at: socket) }) }.start()
        }
        return try outcome.get()
    }

    private static func exchange(_ line: String, at socket: String) throws -> BrokerAnswer {
        let descriptor = socket.withCString { path -> Int32 in
            let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: UnsafeRawBufferPointer(start: path, count: strlen(path))) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            return connected == 0 ? descriptor : -1
        }
        try #require(descriptor >= 0, "cannot connect to \(socket)")
        defer { close(descriptor) }
        let bytes = Array((line + "\n").utf8)
        #expect(write(descriptor, bytes, bytes.count) == bytes.count)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(UInt8(ascii: "\n")) {
            let count = read(descriptor, &buffer, buffer.count)
            try #require(count > 0, "the agent closed the connection without an answer")
            received += buffer[0..<count]
        }
        return try BrokerAnswer.decode(received.prefix { $0 != UInt8(ascii: "\n") })
    }

    static func refusal(_ answer: BrokerAnswer) -> BrokerRefusal? {
        if case .refused(let refusal) = answer { return refusal }
        return nil
    }

    @Test("a request of another version, an unknown operation or an unknown field gets a refusal naming both versions; the agent serves on")
    func wrongProtocol() async throws {
        let bench = try await BrokerBench()
        let broker = try await bench.broker(.throughAgent, at: .local)
        let lines = [
            #"{"v":1,"client":{},"token":{"selector":"corp"}}"#,
            #"{"v":2,"client":{},"refresh_everything":{}}"#,
            #"{"v":2,"client":{},"token":{"selector":"corp","selectr":"other"}}"#,
        ]
        for line in lines {
            let refusal = try #require(Self.refusal(try await Self.answer(toRawLine: line, at: bench.localSocket)), "\(line) was answered")
            #expect(refusal.message.contains("version 2"), "\(refusal.message)")
            #expect(refusal.category == .usage, "\(refusal.category)")
        }
        let versionOne = try #require(Self.refusal(try await Self.answer(toRawLine: lines[0], at: bench.localSocket)))
        #expect(versionOne.message.contains("version 1"))
        let release = try await broker.token(TokenRequest(selector: "corp"))
        #expect(release.accessToken?.exposedValue == "access-1", "a bad line cost the next client its answer")
        await bench.close()
    }

    @Test("a forwarded connection can neither approve a release nor watch for releases waiting")
    func forwardedCannotApprove() async throws {
        let bench = try await BrokerBench(providerLines: "forward = true")
        let forwarded = try await bench.broker(.throughAgent, at: .forwarded)
        do {
            try await forwarded.answer(ApprovalRequest(id: 1, approve: true))
            Issue.record("a forwarded connection answered a release")
        } catch let refusal as BrokerRefusal {
            #expect(refusal.category == .keystore && refusal.message.contains("forwarded"), "\(refusal.message)")
        }
        let watch = try #require(
            Self.refusal(try await Self.answer(toRawLine: #"{"v":2,"client":{},"watch":{}}"#, at: bench.forwardSocket)))
        #expect(watch.message.contains("forwarded"), "\(watch.message)")
        await bench.close()
    }

    @Test("a release of a confirm = true account waits until a person approves it from the local socket")
    func approvedFromTheLocalSocket() async throws {
        let bench = try await BrokerBench(configuration: "[accounts.\"corp:alice@example.com\"]\nconfirm = true\n")
        let broker = try await bench.broker(.throughAgent, at: .local)
        let asking = Task { try await broker.token(TokenRequest(selector: "corp")) }
        var waiting: [WaitingRelease] = []
        for _ in 0..<500 where waiting.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
            waiting = bench.runningAgent?.waiting ?? []
        }
        let release = try #require(waiting.first, "no release waited for a person")
        #expect(release.account == "corp:alice@example.com")
        try await broker.answer(ApprovalRequest(id: release.id, approve: true))
        #expect(try await asking.value.accessToken?.exposedValue == "access-1")
        await #expect(throws: BrokerRefusal.self, "an answer to a release no longer waiting") {
            try await broker.answer(ApprovalRequest(id: release.id, approve: true))
        }
        await bench.close()
    }
}
