import LatchkeyEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Replaces this process with `latchkey-cli`, the full command line, found in `../libexec/latchkey/`
/// (an install by scripts/install or a package) or beside the running executable (a build
/// directory), both relative to the launcher's real path.
public enum CommandLineLauncher {
    public static let programName = "latchkey-cli"

    /// Only returns on failure, with a message for stderr.
    ///
    /// A candidate that does not exist is passed over; one that exists but fails
    /// `TrustedProgram`'s check (another user could have put it there, or could change it) ends
    /// the search with the reason, rather than falling back to a stale copy elsewhere.
    public static func exec(_ arguments: [String]) -> String {
        guard let directory = RunningExecutable.path().flatMap(RunningExecutable.parent(of:)) else {
            return "latchkey: cannot find its own executable (/proc/self/exe)\n"
        }
        let candidates = candidatePaths(executableDirectory: directory)
        for path in candidates {
            let program: TrustedProgram
            do {
                program = try TrustedProgram.open(path)
            } catch .missing {
                continue
            } catch {
                return refusal(path, error)
            }
            let failure = program.exec(arguments: arguments)
            // ENOENT for a file just opened: its loader is missing, or it is a script, whose
            // interpreter cannot reopen a close-on-exec descriptor.
            let hint =
                failure == ENOENT ? " (its program loader is missing, or it is a script: latchkey-cli must be the built program)" : ""
            return "latchkey: cannot start \(program.path): \(String(cString: strerror(failure)))\(hint)\n"
        }
        return "latchkey: \(programName) is missing: it is neither \(candidates.joined(separator: " nor ")); install both again\n"
    }

    /// Why `path` was not run, and what to do about it.
    static func refusal(_ path: String, _ reason: TrustedProgram.Refusal) -> String {
        let advice: String
        switch reason {
        case .anotherUsers, .writableByOthers:
            advice =
                "another user could replace it, or put a library beside it, with code of their own; install Latchkey where only you or root can write"
        case .notExecutable, .notRegularFile, .missing, .unreadable, .tooManyLinks:
            advice = "install both again"
        }
        return "latchkey: refusing to run \(path): \(reason); \(advice)\n"
    }

    /// `PREFIX/libexec/latchkey/` for the launcher `PREFIX/bin/latchkey` first, so a latchkey-cli
    /// an older install left in `PREFIX/bin` cannot shadow the new one; then beside the launcher.
    static func candidatePaths(executableDirectory directory: String) -> [String] {
        let beside = directory + "/" + programName
        guard let prefix = RunningExecutable.parent(of: directory) else { return [beside] }
        return [prefix + "/libexec/latchkey/" + programName, beside]
    }
}
