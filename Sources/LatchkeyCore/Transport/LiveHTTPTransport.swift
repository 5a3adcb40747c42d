import AsyncHTTPClient
import Foundation
import LatchkeyVault
import NIOCore
import NIOHTTP1

/// The network transport: AsyncHTTPClient with redirects off (a token request must never be
/// replayed to another host), bounded time-outs and a cap on response size.
public struct LiveHTTPTransport: HTTPTransport {
    /// Responses from OAuth endpoints are small; 1 MiB leaves room for large JWKS documents.
    public static let responseLimit = 1 << 20

    private static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: .seconds(10), read: .seconds(30))))

    public init() {}

    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let host = request.url.host ?? "the provider"
        guard case .success = EndpointURL.validate(request.url.absoluteString) else {
            throw .insecureURL(request.url.absoluteString)
        }
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        outgoing.headers.add(name: "User-Agent", value: "latchkey/\(LatchkeyVersion.current)")
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await Self.client.execute(outgoing, timeout: .seconds(45))
            let body = try await response.body.collect(upTo: Self.responseLimit)
            return HTTPResponse(
                status: Int(response.status.code),
                headers: response.headers.map { ($0.name, $0.value) },
                body: Array(buffer: body))
        } catch is NIOTooManyBytesError {
            throw .responseTooLarge(host: host, limit: Self.responseLimit)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw .timedOut(host: host)
        } catch {
            throw .unreachable(host: host, reason: TerminalText.sanitized(String(describing: error), maxLength: 200))
        }
    }
}
