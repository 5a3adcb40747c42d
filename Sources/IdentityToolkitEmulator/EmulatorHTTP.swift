import Foundation
public import LoopbackHTTP

/// One request as the emulator sees it, independent of NIO (so the routing is testable alone).
public struct EmulatorRequest: Sendable {
    public var method: String
    /// The path without the query, e.g. `/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword`.
    public var path: String
    public var query: [String: String]
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, uri: String, headers: [String: String], body: [UInt8]) {
        self.method = method
        let pieces = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(pieces[0]).removingPercentEncoding ?? String(pieces[0])
        query = pieces.count > 1 ? Encoding.formDecode(String(pieces[1])) : [:]
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}

extension LoopbackHTTPServer {
    /// Serves `handler` on `host:port` (port 0: any free one) until `close()`: the emulator and
    /// the demo OpenID provider, whose routing knows nothing of HTTP beyond these two types.
    /// A request whose `Host` is not this loopback server gets 421 and never reaches `handler`:
    /// the demo runs beside the person's browser, where any page can make it send requests.
    public static func serve(
        host: String, port: Int, maximumBodyBytes: Int = 1 << 20, _ handler: @escaping @Sendable (EmulatorRequest) -> EmulatorResponse
    ) async throws -> LoopbackHTTPServer {
        try await bind(addresses: [host], ports: [port], maximumBodyBytes: maximumBodyBytes) { request in
            guard LoopbackHTTPRequest.namesLoopback(host: request.header("Host"), port: request.localPort) else {
                return LoopbackHTTPResponse(
                    status: 421, headers: [("Content-Type", "text/plain; charset=utf-8")],
                    body: Array("Misdirected request: this loopback server answers only to 127.0.0.1, [::1] or localhost.\n".utf8))
            }
            let headers = Dictionary(request.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            let response = handler(EmulatorRequest(method: request.method, uri: request.target, headers: headers, body: request.body))
            return LoopbackHTTPResponse(
                status: response.status, headers: [("Content-Type", response.contentType)] + response.headers, body: response.body)
        }
    }
}

/// An answer: JSON for the REST endpoints; the demo OpenID provider also sends HTML pages and
/// redirects (`Location`).
public struct EmulatorResponse: Sendable {
    public var status: Int
    public var body: [UInt8]
    public var contentType = "application/json; charset=UTF-8"
    /// Headers besides `Content-Type` and `Content-Length`, in order.
    public var headers: [(name: String, value: String)] = []

    public init(
        status: Int, body: [UInt8], contentType: String = "application/json; charset=UTF-8", headers: [(name: String, value: String)] = []
    ) {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.headers = headers
    }

    package static func json(_ object: [String: Any], status: Int = 200) -> EmulatorResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return EmulatorResponse(status: status, body: Array(data))
    }
}

/// An Identity Toolkit error: Google's envelope with the code (and detail) in `message`.
struct APIError: Error {
    var status: Int
    var message: String
    var reason: String
    var googleStatus: String?

    /// HTTP 400 `CODE` or `CODE : detail` (docs/firebase-mfa-protocol.md §3).
    static func badRequest(_ code: String, _ detail: String? = nil) -> APIError {
        APIError(status: 400, message: detail.map { "\(code) : \($0)" } ?? code, reason: "invalid", googleStatus: nil)
    }

    var response: EmulatorResponse {
        var error: [String: Any] = [
            "code": status, "message": message, "errors": [["message": message, "domain": "global", "reason": reason]],
        ]
        if let googleStatus { error["status"] = googleStatus }
        return .json(["error": error], status: status)
    }
}
