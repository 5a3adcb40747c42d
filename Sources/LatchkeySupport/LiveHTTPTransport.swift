import CLatchkeyCurl
import Foundation
import LatchkeyCrypto
import LatchkeyEssentials
import LatchkeyVault
import Synchronization

/// The network transport: libcurl, loaded on the first request (docs/libcurl-abi.md), with
/// redirects never followed (a token request must never be replayed to another host), bounded
/// time-outs, TLS verification on and a cap on response size enforced while reading.
public struct LiveHTTPTransport: StreamingHTTPTransport {
    /// Responses from OAuth endpoints are small; 1 MiB leaves room for large JWKS documents.
    public static let responseLimit = 1 << 20
    static let connectTimeout: Duration = .seconds(10)

    /// The whole exchange, from resolving the host to the last byte of the body.
    let deadline: Duration

    public init() { self.init(deadline: .seconds(45)) }

    package init(deadline: Duration) { self.deadline = deadline }

    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        try await perform(request, receiver: nil)
    }

    /// `request` with its answer handed to `receive` as it arrives, on the transfer's own thread:
    /// the head once (the final response's status and headers), then each piece of the body.
    /// For answers that last (an MCP server's SSE stream): no deadline after the connection is
    /// made, and no size cap here, since nothing is kept; `receive` applies its own caps and
    /// returning `false` ends the transfer. The answer returned has an empty body.
    public func stream(
        _ request: HTTPRequest, receive: @escaping @Sendable (HTTPResponsePart) -> Bool
    ) async throws(TransportError) -> HTTPResponse {
        try await perform(request, receiver: receive)
    }

    public func send(_ request: HTTPRequest, within deadline: Duration) async throws(TransportError) -> HTTPResponse {
        try await LiveHTTPTransport(deadline: deadline).send(request)
    }

    private func perform(
        _ request: HTTPRequest, receiver: (@Sendable (HTTPResponsePart) -> Bool)?
    ) async throws(TransportError) -> HTTPResponse {
        let host = request.url.host ?? "the provider"
        guard case .success = EndpointURL.validate(request.url.absoluteString) else {
            throw .insecureURL(request.url.absoluteString)
        }
        if let name = request.headerThatSplits { throw .splittingHeader(name: name) }
        _ = try Self.library()
        let exchange = CurlExchange(request: request, host: host, deadline: deadline, receiver: receiver)
        // curl_easy_perform blocks: it gets a thread of its own, never one of the cooperative pool.
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: exchange.perform()) }
            }
        } onCancel: {
            exchange.cancel()
        }
        return try result.get()
    }

    /// The HTTP library's version (`libcurl/7.88.1 OpenSSL/3.0.15 …`), loading it if need be;
    /// the error says how to install it when it cannot be loaded.
    public static func library() throws(TransportError) -> String { try loaded.get() }

    /// libcurl, loaded once per process (a static is initialised exactly once, whichever thread
    /// asks first) by absolute path from the system's library directories (`SystemLibrary`).
    private static let loaded: Result<String, TransportError> = {
        let path: String
        do {
            path = try SystemLibrary.locate(["libcurl.so.4", "libcurl-gnutls.so.4"])
        } catch {
            return .failure(.httpLibraryMissing("libcurl could not be loaded: \(error)"))
        }
        // libcurl's TLS (libssl) shares this process's libcrypto, and curl_global_init would
        // initialise it with the configuration OPENSSL_CONF names: initialised first, without one.
        do {
            try CryptoLibrary.initialise()
        } catch {
            return .failure(.httpLibraryMissing("libcurl was not loaded: \(error)"))
        }
        var error: UnsafePointer<CChar>?
        guard lk_curl_load(path, &error) == 1 else {
            return .failure(.httpLibraryMissing("libcurl could not be loaded from \(path): \(error.map { String(cString: $0) } ?? "")"))
        }
        return .success(String(cString: lk_curl_version()))
    }()

    /// The hosts no proxy is used for: loopback always (a provider on this machine, the demo, the
    /// test providers), then whatever `no_proxy` adds. Setting `CURLOPT_NOPROXY` replaces the
    /// variable, so its list is carried over; a lone `*` still turns every proxy off.
    static func noProxy(inherited: String?) -> String {
        // 127.0.0.0/8 needs libcurl 7.86; older ones read it as a name, harmlessly.
        let loopback = "localhost,127.0.0.1,::1,127.0.0.0/8"
        guard let inherited = inherited?.trimmingCharacters(in: .whitespaces), !inherited.isEmpty else { return loopback }
        return inherited == "*" ? "*" : loopback + "," + inherited
    }
}

/// One piece of an answer `LiveHTTPTransport.stream` hands on as it arrives.
public enum HTTPResponsePart: Sendable {
    /// The final response's status and headers, before any of its body.
    case head(status: Int, headers: [(String, String)])
    /// The next bytes of the body, as libcurl read them.
    case body([UInt8])
}

/// One request on libcurl's easy interface. `perform` runs on a thread of its own; only
/// `cancelled` is shared with the task that waits for it.
private final class CurlExchange: @unchecked Sendable {
    private let request: HTTPRequest
    private let host: String
    private let deadline: Duration
    private let cancelled = Atomic<Bool>(false)
    private var body: [UInt8] = []
    private var headers: [(String, String)] = []
    private var overLimit = false
    /// Where a streamed answer goes (`LiveHTTPTransport.stream`); `nil` keeps the body.
    private let receiver: (@Sendable (HTTPResponsePart) -> Bool)?
    /// The status line's code, for the head a receiver gets.
    private var status = 0
    private var refused = false

    init(request: HTTPRequest, host: String, deadline: Duration, receiver: (@Sendable (HTTPResponsePart) -> Bool)?) {
        self.request = request
        self.host = host
        self.deadline = deadline
        self.receiver = receiver
    }

    /// Makes the progress callback abort the transfer (within about a second when it is idle).
    func cancel() { cancelled.store(true, ordering: .relaxed) }

    func perform() -> Result<HTTPResponse, TransportError> {
        // The handle keeps pointers to the header list and the error buffer until it is cleaned
        // up, so both outlive it.
        var headerLines: OpaquePointer?
        defer { lk_curl_slist_free_all(headerLines) }
        for (name, value) in request.headers { headerLines = lk_curl_slist_append(headerLines, "\(name): \(value)") }
        // No `Expect: 100-continue` round trip before a POST body.
        headerLines = lk_curl_slist_append(headerLines, "Expect:")
        let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(LK_CURL_ERROR_SIZE))
        errorText.initialize(repeating: 0, count: Int(LK_CURL_ERROR_SIZE))
        defer { errorText.deallocate() }
        guard let handle = lk_curl_easy_init() else {
            return .failure(.unreachable(host: host, reason: "libcurl could not start a request"))
        }
        defer { lk_curl_easy_cleanup(handle) }
        let configured = configure(handle, headerLines: headerLines, errorBuffer: errorText)
        let code = configured == LK_CURLE_OK ? lk_curl_easy_perform(handle) : configured
        let detail = String(cString: errorText[0] != 0 ? UnsafePointer(errorText) : lk_curl_easy_strerror(code))
        return outcome(code, handle: handle, detail: TerminalText.sanitized(detail, maxLength: 200))
    }

    /// Sets every option; the first that fails is returned (`LK_CURLE_OK` when none did).
    private func configure(_ handle: OpaquePointer, headerLines: OpaquePointer?, errorBuffer: UnsafeMutableRawPointer?) -> Int32 {
        let context = Unmanaged.passUnretained(self).toOpaque()
        var codes = [
            lk_curl_setopt_pointer(handle, LK_CURLOPT_ERRORBUFFER, errorBuffer),
            lk_curl_setopt_string(handle, LK_CURLOPT_URL, request.url.absoluteString),
            lk_curl_setopt_string(handle, LK_CURLOPT_USERAGENT, "latchkey/\(LatchkeyVersion.current)"),
            lk_curl_setopt_pointer(handle, LK_CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerLines)),
            // Signals cannot be used from a process with other threads (curl's own advice).
            lk_curl_setopt_long(handle, LK_CURLOPT_NOSIGNAL, 1),
            lk_curl_setopt_long(handle, LK_CURLOPT_FOLLOWLOCATION, 0),
            lk_curl_setopt_long(handle, LK_CURLOPT_NETRC, 0),
            lk_curl_setopt_long(handle, LK_CURLOPT_SSL_VERIFYPEER, 1),
            lk_curl_setopt_long(handle, LK_CURLOPT_SSL_VERIFYHOST, 2),
            lk_curl_setopt_long(handle, LK_CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(LiveHTTPTransport.connectTimeout)),
            // 0: no limit, for a stream that lasts as long as the server's work does.
            lk_curl_setopt_long(handle, LK_CURLOPT_TIMEOUT_MS, receiver == nil ? Self.milliseconds(deadline) : 0),
            lk_curl_setopt_string(handle, LK_CURLOPT_NOPROXY, LiveHTTPTransport.noProxy(inherited: Self.noProxyVariable())),
            // A declared length over the cap fails before the body is read; the body callback
            // enforces it for every other response (a streamed one is capped by its receiver).
            lk_curl_setopt_offset(handle, LK_CURLOPT_MAXFILESIZE_LARGE, receiver == nil ? Int64(LiveHTTPTransport.responseLimit) : 0),
            lk_curl_setopt_write_callback(handle, LK_CURLOPT_WRITEFUNCTION, Self.bodyCallback),
            lk_curl_setopt_pointer(handle, LK_CURLOPT_WRITEDATA, context),
            lk_curl_setopt_write_callback(handle, LK_CURLOPT_HEADERFUNCTION, Self.headerCallback),
            lk_curl_setopt_pointer(handle, LK_CURLOPT_HEADERDATA, context),
            lk_curl_setopt_progress_callback(handle, Self.progressCallback),
            lk_curl_setopt_pointer(handle, LK_CURLOPT_XFERINFODATA, context),
            lk_curl_setopt_long(handle, LK_CURLOPT_NOPROGRESS, 0),
        ]
        let protocols = lk_curl_setopt_string(handle, LK_CURLOPT_PROTOCOLS_STR, "http,https")
        codes.append(
            protocols == LK_CURLE_UNKNOWN_OPTION
                ? lk_curl_setopt_long(handle, LK_CURLOPT_PROTOCOLS, LK_CURLPROTO_HTTP_AND_HTTPS) : protocols)
        switch request.method {
        case .get:
            codes.append(lk_curl_setopt_long(handle, LK_CURLOPT_HTTPGET, 1))
        case .delete:
            // A GET without a body, sent under another method name (RFC 7592 §2.3).
            codes.append(lk_curl_setopt_long(handle, LK_CURLOPT_HTTPGET, 1))
            codes.append(lk_curl_setopt_string(handle, LK_CURLOPT_CUSTOMREQUEST, "DELETE"))
        case .post:
            // Always a body (perhaps empty): a POST without one would make libcurl read stdin.
            let body = request.body ?? []
            codes.append(lk_curl_setopt_long(handle, LK_CURLOPT_POST, 1))
            codes.append(lk_curl_setopt_offset(handle, LK_CURLOPT_POSTFIELDSIZE_LARGE, Int64(body.count)))
            codes.append(
                (body + [0]).withUnsafeBytes {
                    lk_curl_setopt_pointer(handle, LK_CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
                })
        }
        return codes.first { $0 != LK_CURLE_OK } ?? LK_CURLE_OK
    }

    private func outcome(_ code: Int32, handle: OpaquePointer, detail: String) -> Result<HTTPResponse, TransportError> {
        switch code {
        case LK_CURLE_OK:
            var status = 0
            _ = lk_curl_getinfo_long(handle, LK_CURLINFO_RESPONSE_CODE, &status)
            return .success(HTTPResponse(status: status, headers: headers, body: body))
        case LK_CURLE_WRITE_ERROR where refused:
            return .failure(.unreachable(host: host, reason: "the answer was refused while it was read"))
        case LK_CURLE_WRITE_ERROR where overLimit, LK_CURLE_FILESIZE_EXCEEDED:
            return .failure(.responseTooLarge(host: host, limit: LiveHTTPTransport.responseLimit))
        case LK_CURLE_OPERATION_TIMEDOUT:
            return .failure(.timedOut(host: host))
        case LK_CURLE_ABORTED_BY_CALLBACK:
            return .failure(.unreachable(host: host, reason: "the request was cancelled"))
        case LK_CURLE_PEER_FAILED_VERIFICATION, LK_CURLE_SSL_CONNECT_ERROR, LK_CURLE_SSL_CACERT_BADFILE:
            return .failure(.unreachable(host: host, reason: "the TLS connection was refused (\(detail))"))
        default:
            return .failure(.unreachable(host: host, reason: detail))
        }
    }

    // MARK: - Callbacks (on the exchange's thread, inside curl_easy_perform)

    private static let bodyCallback: lk_curl_write_callback = { data, size, count, context in
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
        let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
        if let receiver = exchange.receiver {
            guard receiver(.body(Array(bytes))) else {
                exchange.refused = true
                return 0
            }
            return bytes.count
        }
        guard exchange.body.count + bytes.count <= LiveHTTPTransport.responseLimit else {
            // Anything but the count given aborts the transfer with CURLE_WRITE_ERROR.
            exchange.overLimit = true
            return 0
        }
        exchange.body += bytes
        return bytes.count
    }

    /// One header line at a time, status lines included: each status line (an interim `100`, a
    /// proxy's `CONNECT` answer) starts the list again, so only the final response's headers stay.
    private static let headerCallback: lk_curl_write_callback = { data, size, count, context in
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            exchange.headers = []
            exchange.status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        } else if line.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, exchange.status >= 200, let receiver = exchange.receiver {
            // The blank line ends a final response's head (an interim 1xx has one of its own).
            guard receiver(.head(status: exchange.status, headers: exchange.headers)) else {
                exchange.refused = true
                return 0
            }
        } else if let colon = line.firstIndex(of: ":") {
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            exchange.headers.append((String(line[..<colon]), value))
        }
        return size * count
    }

    private static let progressCallback: lk_curl_progress_callback = { context, _, _, _, _ in
        Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue().cancelled.load(ordering: .relaxed) ? 1 : 0
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// `no_proxy`, else `NO_PROXY`: the order libcurl reads them in.
    private static func noProxyVariable() -> String? {
        (getenv("no_proxy") ?? getenv("NO_PROXY")).map { String(cString: $0) }
    }
}
