/// One whole request as the server received it.
public struct LoopbackHTTPRequest: Sendable {
    public var method: String
    /// The request-target exactly as received: the path and query, still percent-encoded.
    public var target: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The port the request arrived on (0 for a request built by hand).
    public var localPort: Int

    public init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8], localPort: Int = 0) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.localPort = localPort
    }

    /// The target up to its query, as received (not decoded).
    public var path: String { String(target.prefix { $0 != "?" }) }

    /// The first header named `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Whether a `Host` value names a loopback server on `port` as a loopback client does:
    /// `127.0.0.1`, `[::1]` or `localhost`. A web page that reaches a loopback port through a
    /// name its author controls (DNS rebinding) sends that name instead, so it gets nothing.
    public static func namesLoopback(host: String?, port: Int) -> Bool {
        guard let host = host?.lowercased() else { return false }
        return ["127.0.0.1", "[::1]", "localhost"].contains { "\($0):\(port)" == host }
    }
}

/// An answer. The server adds `Content-Length`; a `Connection: close` header closes the
/// connection once the response is sent, as does a client that asked for it.
public struct LoopbackHTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    var closesConnection: Bool {
        headers.contains { $0.name.lowercased() == "connection" && $0.value.lowercased() == "close" }
    }
}
