#if canImport(Glibc)
    import Glibc
#endif

/// Replaces this process with `latchkey-cli`, the full command line, found beside the running
/// executable (or in `../libexec/latchkey/` for a packaged install).
public enum CommandLineLauncher {
    public static let programName = "latchkey-cli"

    /// Only returns on failure, with a message for stderr.
    public static func exec(_ arguments: [String]) -> String {
        guard let directory = executableDirectory() else {
            return "latchkey: cannot find its own executable (/proc/self/exe)\n"
        }
        let candidates = [directory + "/" + programName, directory + "/../libexec/latchkey/" + programName]
        for path in candidates where access(path, X_OK) == 0 {
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
            argv.append(nil)
            execv(path, &argv)
            return "latchkey: cannot start \(path): \(String(cString: strerror(errno)))\n"
        }
        return "latchkey: \(programName) is missing; install it beside \(directory)/latchkey\n"
    }

    private static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let path = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}
