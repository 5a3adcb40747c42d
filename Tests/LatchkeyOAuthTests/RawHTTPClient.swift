import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 client on a raw socket, so tests control every byte (the Host header
/// included) and nothing but the loopback interface is ever touched.
enum RawHTTPClient {
    struct Response {
        var status: Int
        var head: String
        var body: String
    }

    /// One GET to 127.0.0.1:`port`; `nil` when the connection is refused or closed without an answer.
    static func get(port: Int, target: String, host: String) async -> Response? {
        await withCheckedContinuation { continuation in
            // Blocking socket calls stay off the cooperative pool, and off Dispatch's global queue,
            // whose few threads (one per core) held redirects would otherwise take up.
            Thread.detachNewThread { continuation.resume(returning: getBlocking(port: port, target: target, host: host)) }
        }
    }

    private static func getBlocking(port: Int, target: String, host: String) -> Response? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // Generous: a held redirect is answered by a task, which waits its turn on a loaded machine.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = Array("GET \(target) HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: latchkey-tests\r\nAccept: text/html\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let head = String(text[..<split.lowerBound])
        let statusLine = head.split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        return Response(status: status, head: head, body: String(text[split.upperBound...]))
    }
}
