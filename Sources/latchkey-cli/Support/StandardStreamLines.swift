import Foundation

/// The client's messages: standard input, one line each, read on a thread of its own (a read
/// blocks); a line over `limit` is cut there, so it reaches the proxy as the broken JSON it is.
enum StandardInputLines {
    static func read(limit: Int) -> AsyncStream<[UInt8]> {
        let (lines, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        Thread.detachNewThread {
            var line: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { Foundation.read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                for byte in buffer[..<count] {
                    if byte == 0x0A {
                        continuation.yield(line)
                        line.removeAll(keepingCapacity: true)
                    } else if line.count < limit {
                        line.append(byte)
                    }
                }
            }
            if !line.isEmpty { continuation.yield(line) }
            continuation.finish()
        }
        return lines
    }
}

/// Lines to the client on standard output, each whole, with its newline (the stdio transport).
enum StandardOutputLines {
    static func write(_ line: [UInt8]) {
        let bytes = line + [0x0A]
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Foundation.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            // The client closed its end: nobody is left to read; its stdin ends the proxy.
            guard count > 0 else { return }
            written += count
        }
    }
}
