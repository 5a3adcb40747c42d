public import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// Adds a `KubeconfigEntry` to a kubeconfig file, after copying the file aside: kubectl edits
/// the file (`config set-credentials`, `config set-context`), so every shape of kubeconfig it
/// reads stays one it reads, and Latchkey needs no YAML parser of its own.
///
/// Nothing is changed unless the cluster is in the file and the copy was made; a copy is never
/// overwritten (a second run in the same second gets `.2`, `.3`…).
public struct KubeconfigWriter: Sendable {
    /// The kubeconfig file changed: `--kubeconfig`, else `$KUBECONFIG` when it names one file,
    /// else `~/.kube/config` (`file(option:environment:)`).
    public var file: String
    public var environment: [String: String]

    public init(file: String, environment: [String: String]) {
        self.file = file
        self.environment = environment
    }

    /// Which file to change. `$KUBECONFIG` with several files is refused: kubectl would write a
    /// new user into one of them by a rule a person should not have to know.
    public static func file(option: String?, environment: [String: String]) throws(KubeconfigError) -> String {
        if let option { return option }
        let listed = (environment["KUBECONFIG"] ?? "").split(separator: ":").map(String.init)
        if listed.count > 1 { throw .severalFiles }
        if let only = listed.first { return only }
        guard let home = environment["HOME"], !home.isEmpty else { throw .noHome }
        return home + "/.kube/config"
    }

    /// Writes `entry`; returns the backup's path.
    public func write(_ entry: KubeconfigEntry, now: Date = Date()) throws(KubeconfigError) -> String {
        guard let kubectl = ExecutableSearch.find("kubectl", environment: environment) else { throw .noKubectl }
        guard FileManager.default.fileExists(atPath: file) else { throw .noFile(file) }
        let clusters = try run(kubectl, ["config", "get-clusters"])
            .split(separator: "\n").dropFirst().map { String($0) }  // the first line is the "NAME" heading
        guard clusters.contains(entry.cluster) else { throw .noCluster(entry.cluster, file: file, known: clusters) }
        let backup = try backUp(now: now)
        for arguments in [entry.setCredentialsArguments, entry.setContextArguments] {
            do {
                _ = try run(kubectl, arguments)
            } catch {
                throw .kubectlFailedAfterBackup(error, backup: backup)
            }
        }
        return backup
    }

    /// `kubectl --kubeconfig FILE ARGUMENTS`, its stdout on success.
    private func run(_ kubectl: String, _ arguments: [String]) throws(KubeconfigError) -> String {
        let outcome: ChildProcess.Outcome
        do {
            outcome = try ChildProcess.run(
                path: kubectl, arguments: ["--kubeconfig", file] + arguments, environment: environment, input: [], timeout: 30,
                outputLimit: 1 << 20, stopAtNewline: false)
        } catch {
            throw .kubectl(arguments.prefix(2).joined(separator: " "), reason: error.description)
        }
        guard outcome.status == 0 else {
            let said = String(decoding: outcome.errorOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let reason = outcome.timedOut ? "timed out" : said.isEmpty ? "exit status \(outcome.status.map(String.init) ?? "?")" : said
            throw .kubectl(arguments.prefix(2).joined(separator: " "), reason: TerminalText.sanitized(reason, maxLength: 300))
        }
        return String(decoding: outcome.output, as: UTF8.self)
    }

    /// Copies the file aside (`FileBackup`).
    private func backUp(now: Date) throws(KubeconfigError) -> String {
        do {
            return try FileBackup.copy(file, now: now)
        } catch {
            throw .backup(error.path, reason: error.reason)
        }
    }
}

/// Why `latchkey kubeconfig --write` changed nothing (or, after the backup, what kubectl said).
public enum KubeconfigError: LatchkeyError, Equatable {
    case severalFiles
    case noHome
    case noKubectl
    case noFile(String)
    case noCluster(String, file: String, known: [String])
    case backup(String, reason: String)
    case kubectl(String, reason: String)
    indirect case kubectlFailedAfterBackup(KubeconfigError, backup: String)

    public var category: FailureCategory {
        switch self {
        case .severalFiles: return .usage
        case .noHome, .noFile, .noCluster: return .notFound
        case .noKubectl, .kubectl, .kubectlFailedAfterBackup: return .unavailable
        case .backup: return .cannotCreate
        }
    }

    public var description: String {
        let s = { (text: String) in TerminalText.sanitized(text, maxLength: 200) }
        switch self {
        case .severalFiles:
            return "KUBECONFIG names several files; say which one to change with --kubeconfig FILE"
        case .noHome:
            return "HOME is not set, so there is no ~/.kube/config; say which file to change with --kubeconfig FILE"
        case .noKubectl:
            return "kubectl is not on PATH: --write has kubectl edit the kubeconfig; without --write, paste the printed entries yourself"
        case .noFile(let file):
            return "\(s(file)) does not exist; add the cluster first (kubectl config set-cluster NAME --server=URL …)"
        case .noCluster(let cluster, let file, let known):
            let listed = known.isEmpty ? "it has none" : "it has " + known.map(s).joined(separator: ", ")
            return "\(s(file)) has no cluster \(s(cluster)) (\(listed)); add it first with kubectl config set-cluster"
        case .backup(let path, let reason):
            return "cannot back up the kubeconfig to \(s(path)): \(reason); nothing was changed"
        case .kubectl(let command, let reason):
            return "kubectl \(command) failed: \(reason)"
        case .kubectlFailedAfterBackup(let error, let backup):
            return "\(error.description); the file as it was is in \(s(backup))"
        }
    }
}
