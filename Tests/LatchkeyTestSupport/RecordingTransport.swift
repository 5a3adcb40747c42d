import Foundation
public import LatchkeySupport
import Synchronization

/// An HTTP transport that answers from a script and records every request, so engine tests
/// can say exactly what went over the wire without a network.
public final class RecordingTransport: HTTPTransport {
    /// How one request is answered: a response for a URL path, or a transport failure.
    public typealias Answer = @Sendable (HTTPRequest) -> Result<HTTPResponse, TransportError>

    private let state = Mutex<(queued: [HTTPResponse], routes: [(path: String, answer: Answer)], sent: [HTTPRequest])>(([], [], []))

    /// Where requests no route and no queued answer take go: a live transport to a loopback
    /// emulator, or nil for HTTP 500.
    private let fallback: (any HTTPTransport)?

    /// Answers requests in order from `answers`, then from `fallback` (or HTTP 500).
    public init(_ answers: [HTTPResponse] = [], fallback: (any HTTPTransport)? = nil) {
        self.fallback = fallback
        state.withLock { $0.queued = answers }
    }

    /// Answers every request whose URL path is `path` with `answer`, before the queue is used;
    /// the latest route for a path wins.
    public func route(_ path: String, _ answer: @escaping Answer) {
        state.withLock { $0.routes.insert((path, answer), at: 0) }
    }

    /// Answers `path` with a JSON body (status 200 unless given).
    public func route(_ path: String, status: Int = 200, json: String) {
        route(path) { _ in .success(HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(json.utf8))) }
    }

    public var sent: [HTTPRequest] { state.withLock { $0.sent } }

    /// The requests sent to `path`.
    public func sent(to path: String) -> [HTTPRequest] { sent.filter { $0.url.path == path } }

    /// The JSON body of the `index`th request.
    public func body(_ index: Int) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(sent[index].body ?? [])) as? [String: Any]) ?? [:]
    }

    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let answer: Result<HTTPResponse, TransportError>? = state.withLock { state in
            state.sent.append(request)
            if let route = state.routes.first(where: { $0.path == request.url.path }) { return route.answer(request) }
            if !state.queued.isEmpty { return .success(state.queued.removeFirst()) }
            return fallback == nil ? .success(HTTPResponse(status: 500, body: [])) : nil
        }
        if let answer { return try answer.get() }
        return try await fallback!.send(request)
    }
}

extension HTTPRequest {
    /// The form parameters of a `application/x-www-form-urlencoded` body.
    public var form: [String: String] {
        var pairs: [String: String] = [:]
        for pair in String(decoding: body ?? [], as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ") }
            guard let name = parts.first?.removingPercentEncoding else { continue }
            pairs[name] = parts.count > 1 ? parts[1].removingPercentEncoding ?? parts[1] : ""
        }
        return pairs
    }

    /// Every value of the form parameter `name`, in order (`resource` may repeat, RFC 8707 §2).
    public func formValues(_ name: String) -> [String] {
        String(decoding: body ?? [], as: UTF8.self).split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ") }
            guard parts.first?.removingPercentEncoding == name else { return nil }
            return parts.count > 1 ? parts[1].removingPercentEncoding ?? parts[1] : ""
        }
    }

    /// The value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
