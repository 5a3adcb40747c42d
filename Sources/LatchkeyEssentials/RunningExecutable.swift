#if canImport(Glibc)
    import Glibc
#endif

/// Where the running executable really is, so an install reached through a symlink (such as
/// `~/bin/latchkey` pointing into `/opt/latchkey/bin`) still finds the files installed with it.
public enum RunningExecutable {
    /// The real path from `/proc/self/exe` (the kernel has resolved every symlink), or `nil`
    /// when `/proc` is not mounted.
    public static func path() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Everything before the last `/` of `path`: `/usr/local/bin` for `/usr/local/bin/latchkey`.
    public static func parent(of path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}
