public import Foundation
import LatchkeyEssentials
public import LatchkeyVault

/// One HTTP exchange with a provider, small enough to fake in tests and to log safely.
public struct HTTPRequest: Sendable {
    public enum Method: String, Sendable { case get = "GET", post = "POST", delete = "DELETE" }
    public var method: Method
    public var url: URL
    public var headers: [(String, String)]
    public var body: [UInt8]?

    public init(method: Method, url: URL, headers: [(String, String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// A form POST (RFC 6749 Appendix B) asking for JSON back.
    public static func form(_ url: URL, _ pairs: [(String, String)], headers: [(String, String)] = []) -> HTTPRequest {
        HTTPRequest(
            method: .post, url: url,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")] + headers,
            body: Array(FormEncoding.encode(pairs).utf8))
    }

    /// A JSON POST (RFC 7591 §3.1) asking for JSON back.
    public static func json(_ url: URL, _ body: [UInt8], headers: [(String, String)] = []) -> HTTPRequest {
        HTTPRequest(
            method: .post, url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")] + headers, body: body)
    }
}

extension HTTPRequest {
    /// The first header whose name is not a token (RFC 9110 §5.1: visible ASCII, no colon) or
    /// whose value holds CR, LF or NUL. Values come from servers (a registration access token, a
    /// DPoP nonce) and libcurl sends a header line as it is given, so such a header would end the
    /// line early and let its author add headers, or a whole second request, of their own.
    public var headerThatSplits: String? {
        headers.first { name, value in
            name.isEmpty || !name.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ":") }
                || value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
        }?.0
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends requests to providers. The live one enforces https, time-outs and a size cap.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse
}

/// An HTTP client that hands an answer over as it arrives: what `mcp proxy` needs for a server's
/// event streams. `LiveHTTPTransport` over libcurl; an in-memory one in tests.
public protocol StreamingHTTPTransport: HTTPTransport {
    /// `request` with its answer handed to `receive` as it arrives: the head once (the final
    /// response's status and headers), then each piece of the body; `receive` returning `false`
    /// ends the transfer. No deadline once the answer has begun.
    func stream(_ request: HTTPRequest, receive: @escaping @Sendable (HTTPResponsePart) -> Bool) async throws(TransportError)
        -> HTTPResponse

    /// `send` bounded by `deadline`, whatever the transport's own is: a request that must not
    /// hold up an ending (the session's DELETE).
    func send(_ request: HTTPRequest, within deadline: Duration) async throws(TransportError) -> HTTPResponse
}

/// Why a provider could not be talked to; always worth retrying later.
public enum TransportError: LatchkeyError, Equatable {
    case insecureURL(String)
    case unreachable(host: String, reason: String)
    case timedOut(host: String)
    case responseTooLarge(host: String, limit: Int)
    /// A header that would split the request (`HTTPRequest.headerThatSplits`); its name only.
    case splittingHeader(name: String)
    /// libcurl could not be loaded; the text says why.
    case httpLibraryMissing(String)

    /// What to do about `httpLibraryMissing`.
    public static let installHTTPLibrary = "install libcurl (Debian and Ubuntu: apt-get install libcurl4)"

    public var category: FailureCategory {
        switch self {
        case .insecureURL, .responseTooLarge, .splittingHeader: return .rejected
        case .unreachable, .timedOut, .httpLibraryMissing: return .unavailable
        }
    }

    public var description: String {
        switch self {
        case .insecureURL(let url):
            return
                "refusing to send credentials to \(TerminalText.sanitized(url, maxLength: 200)): https is required except for loopback hosts"
        case .unreachable(let host, let reason):
            return "cannot reach \(host): \(reason); check the network and the provider's address"
        case .timedOut(let host):
            return "\(host) did not answer in time; try again later"
        case .responseTooLarge(let host, let limit):
            return "\(host) sent more than \(limit / 1024) KiB; refusing the response"
        case .splittingHeader(let name):
            return
                "refusing to send a \(TerminalText.sanitized(name, maxLength: 60)) header holding a line break or NUL: a server's answer would add headers of its own to the request"
        case .httpLibraryMissing(let reason):
            return "cannot make network requests: \(reason); \(Self.installHTTPLibrary)"
        }
    }
}
