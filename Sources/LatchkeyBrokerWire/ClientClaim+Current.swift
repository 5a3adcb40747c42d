import LatchkeyEssentials

#if canImport(Glibc)
    import Glibc
#endif

extension ClientClaim {
    /// This process as the agent's prompt and log name it: the host, and the command that ran
    /// `latchkey` (its parent), which says more than `latchkey token NAME` does.
    public static func current() -> ClientClaim {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count - 1) == 0 ? Self.text(name) : nil
        return ClientClaim(host: host, pid: getppid(), command: commandLine(of: getppid()))
    }

    /// `/proc/PID/cmdline` with its NULs as spaces, cut to `commandLimit` bytes; `nil` when unreadable.
    public static func commandLine(of pid: Int32) -> String? {
        let descriptor = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: commandLimit)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        var text = bytes[0..<count].map { $0 == 0 ? UInt8(ascii: " ") : $0 }
        while text.last == UInt8(ascii: " ") { text.removeLast() }
        return String(decoding: text, as: UTF8.self)
    }

    /// A NUL-terminated C string from a buffer the kernel filled.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
