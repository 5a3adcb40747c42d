import CLatchkeySys
import Foundation
import LatchkeyDemo
import LatchkeyEssentials

/// Removes the demo's private directory (its passphrase file and vault included) however the
/// demo ends: a second process, in its own process group, waits for the end of a pipe only the
/// demo holds open, which the kernel closes when the demo exits for any reason, SIGKILL and a
/// crash included; the demo's own cleanup usually gets there first.
enum DemoWatchdog {
    /// Starts the watchdog for `directory`; the pipe's write end stays open (close-on-exec, so
    /// nothing the demo starts holds it) until this process ends.
    static func start(for directory: String) {
        guard let program = RunningExecutable.path() else { return }
        var ends: [Int32] = [-1, -1]
        guard lk_pipe_cloexec(&ends) == 0 else { return }
        let arguments = [program, "demo", "--remove-when-done", directory]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var environment: [UnsafeMutablePointer<CChar>?] = [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        _ = lk_spawn(program, &argv, &environment, ends[0], -1, -1, &pid)
        close(ends[0])
    }

    /// The watchdog itself: waits for the demo to end, then removes `directory` if it still is a
    /// private demo directory of this user.
    static func waitThenRemove(_ directory: String) -> Never {
        // Keys typed at the terminal (Ctrl-C, Ctrl-\) and a hang-up are the demo's to get.
        for number in [SIGINT, SIGQUIT, SIGHUP] { signal(number, SIG_IGN) }
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
        }
        if DemoSession.isPrivateDirectory(directory) { try? FileManager.default.removeItem(atPath: directory) }
        exit(0)
    }
}
