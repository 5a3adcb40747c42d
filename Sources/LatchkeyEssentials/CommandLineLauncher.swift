#if canImport(Glibc)
    import Glibc
#endif

/// Replaces this process with `latchkey-cli`, the full command line, found in `../libexec/latchkey/`
/// (an install by scripts/install or a package) or beside the running executable (a build
/// directory), both relative to the launcher's real path.
public enum CommandLineLauncher {
    public static let programName = "latchkey-cli"

    /// Only returns on failure, with a message for stderr.
    public static func exec(_ arguments: [String]) -> String {
        guard let directory = RunningExecutable.path().flatMap(RunningExecutable.parent(of:)) else {
            return "latchkey: cannot find its own executable (/proc/self/exe)\n"
        }
        let candidates = candidatePaths(executableDirectory: directory)
        for path in candidates where access(path, X_OK) == 0 {
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
            argv.append(nil)
            execv(path, &argv)
            return "latchkey: cannot start \(path): \(String(cString: strerror(errno)))\n"
        }
        return "latchkey: \(programName) is missing: it is neither \(candidates.joined(separator: " nor ")); install both again\n"
    }

    /// `PREFIX/libexec/latchkey/` for the launcher `PREFIX/bin/latchkey` first, so a latchkey-cli
    /// an older install left in `PREFIX/bin` cannot shadow the new one; then beside the launcher.
    static func candidatePaths(executableDirectory directory: String) -> [String] {
        let beside = directory + "/" + programName
        guard let prefix = RunningExecutable.parent(of: directory) else { return [beside] }
        return [prefix + "/libexec/latchkey/" + programName, beside]
    }
}
