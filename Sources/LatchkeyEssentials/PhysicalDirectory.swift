#if canImport(Glibc)
    import Glibc
#endif

/// The working directory as getcwd(3) gives it (symlinks resolved), which directory mappings
/// and relative program paths are compared with.
public enum PhysicalDirectory {
    /// The working directory, or `nil` when it cannot be named (removed, or longer than 4 KiB).
    public static func current() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
