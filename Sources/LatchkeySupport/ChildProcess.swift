import CLatchkeySys
package import Foundation
import Synchronization

/// The one way Latchkey starts another program (the second-factor plugin, the browser).
///
/// Every child starts clean (empty signal mask, default dispositions, no inherited descriptors)
/// in a process group of its own, so a deadline ends the whole group, grandchildren included;
/// output is read with a deadline and a size cap, and a child that keeps its output open cannot
/// keep the caller waiting.
package enum ChildProcess {
    /// How a run ended.
    package struct Outcome {
        /// What the child wrote on stdout, up to the first newline when `stopAtNewline`.
        package var output: [UInt8]
        /// Its stderr, at most `stderrLimit` bytes (for error messages, sanitised before shown).
        package var errorOutput: [UInt8]
        /// The exit status, or nil when it was killed (deadline, size cap) or died of a signal.
        package var status: Int32?
        package var timedOut = false
        package var tooLarge = false
    }

    package enum LaunchError: Error, CustomStringConvertible {
        case cannotStart(String)
        package var description: String {
            switch self {
            case .cannotStart(let reason): return reason
            }
        }
    }

    static let stderrLimit = 4096

    /// Runs `path` with `input` on stdin and waits at most `timeout` for its answer on stdout: all
    /// of it, or only the first line when `stopAtNewline`. At the deadline, past `outputLimit`
    /// bytes, or once the line has arrived, the child's whole process group is killed.
    package static func run(
        path: String, arguments: [String] = [], environment: [String: String], input: [UInt8], timeout: TimeInterval,
        outputLimit: Int, stopAtNewline: Bool, owner: ChildProcessGroups? = nil
    ) throws(LaunchError) -> Outcome {
        let stdin = try makePipe()
        let stdout = try makePipe()
        let stderr = try makePipe()
        let pid: pid_t
        do {
            pid = try spawn(path: path, arguments: arguments, environment: environment, fds: (stdin.read, stdout.write, stderr.write))
        } catch {
            for fd in [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write] { close(fd) }
            throw error
        }
        owner?.insert(pid)
        defer { owner?.remove(pid) }
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        // A child that exits without reading (a hook that fails at once) must not kill us with
        // SIGPIPE: the write then fails with EPIPE instead. Non-blocking alone does not prevent
        // the signal; the child itself starts with default dispositions (`spawn`).
        _ = signal(SIGPIPE, SIG_IGN)
        _ = fcntl(stdin.write, F_SETFL, fcntl(stdin.write, F_GETFL) | O_NONBLOCK)

        var outcome = Outcome(output: [], errorOutput: [], status: nil)
        let deadline = Date().addingTimeInterval(timeout)
        var pending = input[...]
        var open: [Int32: Bool] = [stdout.read: true, stderr.read: true]
        var writing = !pending.isEmpty
        if !writing { close(stdin.write) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var answered = false

        loop: while open.values.contains(true) || writing {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                outcome.timedOut = true
                break
            }
            var fds = open.filter(\.value).map { pollfd(fd: $0.key, events: Int16(POLLIN), revents: 0) }
            if writing { fds.append(pollfd(fd: stdin.write, events: Int16(POLLOUT), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining, 1) * 1000) + 1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for entry in fds where entry.revents != 0 {
                if entry.fd == stdin.write {
                    let written = pending.withUnsafeBytes { Foundation.write(stdin.write, $0.baseAddress, $0.count) }
                    if written > 0 { pending = pending.dropFirst(written) }
                    if written < 0 && errno != EAGAIN || pending.isEmpty {
                        close(stdin.write)
                        writing = false
                    }
                    continue
                }
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count <= 0 {
                    if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    open[entry.fd] = false
                    continue
                }
                if entry.fd == stderr.read {
                    outcome.errorOutput += buffer[0..<min(count, max(0, stderrLimit - outcome.errorOutput.count))]
                    continue
                }
                outcome.output += buffer[0..<count]
                if stopAtNewline, let newline = outcome.output.firstIndex(of: UInt8(ascii: "\n")) {
                    outcome.output.removeSubrange(newline...)
                    answered = true
                    break loop
                }
                if outcome.output.count > outputLimit {
                    outcome.tooLarge = true
                    break loop
                }
            }
        }
        if writing { close(stdin.write) }
        close(stdout.read)
        close(stderr.read)
        // Killed at once past the deadline or the cap; a moment to exit after answering; until the
        // deadline when it closed its output (its exit status says how it went).
        let exitBy =
            outcome.timedOut || outcome.tooLarge ? Date() : answered ? min(deadline, Date().addingTimeInterval(0.2)) : deadline
        outcome.status = finish(pid, deadline: exitBy)
        return outcome
    }

    /// Starts `path` without waiting for it (a browser); it is reaped in the background.
    package static func launch(path: String, arguments: [String], environment: [String: String]) throws(LaunchError) {
        let pid = try spawn(path: path, arguments: arguments, environment: environment, fds: (-1, -1, -1))
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }

    // MARK: - Parts

    private static func makePipe() throws(LaunchError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard lk_pipe_cloexec(&fds) == 0 else { throw .cannotStart("pipe: \(String(cString: strerror(errno)))") }
        return (fds[0], fds[1])
    }

    private static func spawn(
        path: String, arguments: [String], environment: [String: String], fds: (Int32, Int32, Int32)
    ) throws(LaunchError) -> pid_t {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = lk_spawn(path, argv, envp, fds.0, fds.1, fds.2, &pid)
        guard result == 0 else { throw .cannotStart(String(cString: strerror(result))) }
        return pid
    }

    /// Ends the child: its exit status when it exits by itself before the deadline, else (and
    /// always, for whatever it left running) the whole group is killed and reaped.
    private static func finish(_ pid: pid_t, deadline: Date) -> Int32? {
        var status: Int32 = 0
        var exited: Int32? = nil
        while deadline.timeIntervalSinceNow > 0 {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid {
                exited = status
                break
            }
            if done < 0 && errno != EINTR { break }
            usleep(5_000)
        }
        kill(-pid, SIGKILL)
        if exited == nil {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        guard let exited, exited & 0x7f == 0 else { return nil }
        return (exited >> 8) & 0xff
    }
}

/// The process groups of the children one owner's `ChildProcess.run` calls are waiting for. A hook
/// the agent fired may run for its whole timeout; when the agent stops first, it ends its own
/// children with it rather than leaving them behind, orphaned, and ends no one else's (another
/// part of the same process, a plugin a sign-in is waiting for, is not the agent's to kill).
package final class ChildProcessGroups: Sendable {
    private let groups = Mutex<Set<pid_t>>([])

    package init() {}

    fileprivate func insert(_ group: pid_t) { groups.withLock { _ = $0.insert(group) } }
    fileprivate func remove(_ group: pid_t) { groups.withLock { _ = $0.remove(group) } }

    /// Kills the whole process group of every child still running for this owner (each `run`
    /// then returns as for a child killed by a signal).
    package func endAll() {
        for group in groups.withLock({ $0 }) { kill(-group, SIGKILL) }
    }
}
