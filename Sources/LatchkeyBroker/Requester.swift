import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyVault

/// Who asked the agent for a token, as the confirmation prompt and the release log name them.
///
/// On the local socket the kernel says which process connected (SO_PEERCRED), and its command
/// line and its parent's are read from /proc: `latchkey token github` run by `bash ./deploy.sh`.
/// On a forwarded socket the process is on another host and only the client's own claim can be
/// shown, marked as such.
public struct Requester: Sendable, Equatable, CustomStringConvertible {
    var forwarded: Bool
    /// The connecting process, on a local socket.
    var pid: Int32?
    var command: String?
    /// The process that ran it, on a local socket.
    var parentPID: Int32?
    var parentCommand: String?
    /// What a forwarded client says about itself.
    var claimed: ClientClaim?

    init(connection: AgentConnection, claimed: ClientClaim?) {
        forwarded = connection.kind == .forwarded
        guard !forwarded else {
            self.claimed = claimed
            return
        }
        self = Self.local(connection.pid)
    }

    /// The process `pid` on this machine, and the one that ran it.
    static func local(_ pid: Int32) -> Requester {
        let parentPID = parent(of: pid)
        return Requester(
            forwarded: false, pid: pid, command: ClientClaim.commandLine(of: pid), parentPID: parentPID,
            parentCommand: parentPID.flatMap(ClientClaim.commandLine(of:)))
    }

    /// The program that ran this one: where a command hands the token it prints or passes on.
    public static func parentOfThisProcess() -> Requester { local(getppid()) }

    init(
        forwarded: Bool, pid: Int32? = nil, command: String? = nil, parentPID: Int32? = nil, parentCommand: String? = nil,
        claimed: ClientClaim? = nil
    ) {
        self.forwarded = forwarded
        self.pid = pid
        self.command = command
        self.parentPID = parentPID
        self.parentCommand = parentCommand
        self.claimed = claimed
    }

    /// One line, every part from outside made inert for a terminal.
    public var description: String {
        func quoted(_ text: String?) -> String {
            text.map { "`" + TerminalText.sanitized($0, maxLength: 200) + "`" } ?? "(unknown command)"
        }
        if forwarded {
            let host = claimed?.host.map { TerminalText.sanitized($0, maxLength: 100) } ?? "an unnamed host"
            let process = claimed?.pid.map { " pid \($0)" } ?? ""
            return "forwarded: \(host) says \(quoted(claimed?.command))\(process)"
        }
        var text = "local: \(quoted(command)) pid \(pid.map(String.init) ?? "?")"
        if let parentPID { text += ", run by \(quoted(parentCommand)) pid \(parentPID)" }
        return text
    }

    /// The parent of `pid`, from the fourth field of /proc/PID/stat (after the command name,
    /// which is in parentheses and may itself hold spaces and parentheses).
    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }

    /// The programs a connection to the local socket comes from when someone forwards it: the SSH
    /// client (`ssh -R …:agent.sock`), and the server's process for one connection (`ssh -L`):
    /// `sshd` until OpenSSH 9.8, `sshd-session` from 9.8 on.
    static let sshPrograms: Set<String> = ["ssh", "sshd", "sshd-session"]

    /// Whether `pid` runs an SSH client or server: a connection to the local socket from one is
    /// someone forwarding it and is treated as forwarded.
    ///
    /// Best effort. The executable (/proc/PID/exe) is checked, and the process's name
    /// (/proc/PID/comm) as well, because OpenSSH's processes make themselves undumpable, which
    /// hides their `exe` link from their own user; either one naming an SSH program counts, since
    /// a process any program may name so only gets less for it. An SSH program copied or linked
    /// under another name is not recognised: `--forward-socket` is the way to forward the agent.
    static func isSSH(_ pid: Int32) -> Bool {
        let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        return isSSH(executable: executable, name: name)
    }

    /// `isSSH` on what /proc said: the executable's path (`nil` when hidden) and the process's name.
    static func isSSH(executable: String?, name: String?) -> Bool {
        // The kernel marks an executable replaced since it started (an upgrade) " (deleted)".
        let program = executable.map { path in
            (path.hasSuffix(" (deleted)") ? String(path.dropLast(10)) : path).split(separator: "/").last.map(String.init) ?? path
        }
        let names = [program, name?.trimmingCharacters(in: .whitespacesAndNewlines)].compactMap { $0 }
        return names.contains(where: sshPrograms.contains)
    }
}
