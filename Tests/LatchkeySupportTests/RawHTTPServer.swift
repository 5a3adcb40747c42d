import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP server on a raw loopback socket, for answers no well-behaved server gives: a body
/// that never ends, silence, a redirect to count. Each connection's request head is read and
/// recorded, then `answer` writes whatever it likes to the socket.
final class RawHTTPServer: Sendable {
    let port: Int
    private let descriptor: Int32
    private let heads = Mutex<[String]>([])

    /// The request heads received so far.
    var requests: [String] { heads.withLock { $0 } }

    init(answer: @escaping @Sendable (_ connection: Int32) -> Void) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 8) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else {
                    // Closed here, not in `stop`: its number could otherwise be reused by another
                    // server's socket while this thread still accepts on it.
                    Glibc.close(descriptor)
                    return
                }
                let head = Self.readHead(connection)
                heads.withLock { $0.append(head) }
                answer(connection)
                Glibc.close(connection)
            }
        }
    }

    /// Stops accepting: the blocked `accept` returns and its thread closes the socket.
    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Writes all of `text`; false once the client has gone.
    @discardableResult
    static func write(_ text: String, to connection: Int32) -> Bool { write(Array(text.utf8), to: connection) }

    @discardableResult
    static func write(_ bytes: [UInt8], to connection: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Blocks until the client closes the connection.
    static func waitForClose(_ connection: Int32) {
        var byte: UInt8 = 0
        while recv(connection, &byte, 1, 0) > 0 {}
    }

    private static func readHead(_ connection: Int32) -> String {
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while recv(connection, &byte, 1, 0) == 1 {
            head.append(byte)
            if head.count >= 4 && head.suffix(4) == [13, 10, 13, 10] { break }
        }
        return String(decoding: head, as: UTF8.self)
    }
}
