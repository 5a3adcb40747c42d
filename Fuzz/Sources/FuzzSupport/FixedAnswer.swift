internal import Dispatch
public import LatchkeySupport

/// A transport that answers every request with the same response: the input, as a server sent it.
public struct FixedAnswer: HTTPTransport {
    public let response: HTTPResponse

    public init(_ response: HTTPResponse) { self.response = response }

    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse { response }
}

/// The value `work` gives, waited for: the async code a target drives from libFuzzer's callback.
/// `work` does not suspend on anything but a `FixedAnswer`, so it ends without a timer or a socket.
public func waitFor<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) -> Value {
    let box = Box<Value>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// Carries a value from the task to the thread that waits for it; the semaphore orders the two.
private final class Box<Value>: @unchecked Sendable {
    var value: Value?
}
