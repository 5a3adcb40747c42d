import Foundation
public import LatchkeyVault

/// The kubeconfig entries that make kubectl ask Latchkey for a cluster's token: a `users[]` entry
/// whose `exec` runs `latchkey kubectl-credential SELECTOR`, and a `contexts[]` entry, named
/// after the cluster, that ties the cluster to that user.
///
/// Printed as YAML for a person to paste, or written by kubectl itself (`kubectl config
/// set-credentials` and `set-context`), which alone knows every shape a kubeconfig takes.
public struct KubeconfigEntry: Sendable, Equatable {
    public var selector: AccountSelector
    /// The `clusters[].name` the context points at (and the context's own name).
    public var cluster: String
    public var apiVersion: ExecCredentialAPIVersion
    /// How kubectl starts Latchkey: `latchkey` from its PATH unless told otherwise.
    public var command: String

    public init(selector: AccountSelector, cluster: String, apiVersion: ExecCredentialAPIVersion, command: String) {
        self.selector = selector
        self.cluster = cluster
        self.apiVersion = apiVersion
        self.command = command
    }

    /// `users[].name`: one per account, so several clusters signing in as one account share it.
    public var userName: String { "latchkey-\(selector)" }

    /// `users[].user.exec.args`.
    public var arguments: [String] { ["kubectl-credential", selector.description] }

    /// `interactiveMode`: required in `v1`; `IfAvailable` lets a sign-in prompt when kubectl runs
    /// at a terminal. `v1beta1` entries leave it out: kubectl before 1.22 has no such member, and
    /// later ones take `IfAvailable` for `v1beta1` when it is absent.
    public var interactiveMode: String? { apiVersion == .v1 ? "IfAvailable" : nil }

    /// The entries as YAML, every string double-quoted as JSON writes it (YAML reads JSON strings).
    public var yaml: String {
        let q = Self.quoted
        var lines = [
            "users:",
            "- name: \(q(userName))",
            "  user:",
            "    exec:",
            "      apiVersion: \(q(apiVersion.rawValue))",
            "      command: \(q(command))",
            "      args:",
        ]
        lines += arguments.map { "      - \(q($0))" }
        if let interactiveMode { lines.append("      interactiveMode: \(q(interactiveMode))") }
        lines += [
            "contexts:",
            "- name: \(q(cluster))",
            "  context:",
            "    cluster: \(q(cluster))",
            "    user: \(q(userName))",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `kubectl config set-credentials …`: replaces the user's exec, arguments included.
    public var setCredentialsArguments: [String] {
        var arguments = [
            "config", "set-credentials", userName, "--exec-command=\(command)", "--exec-api-version=\(apiVersion.rawValue)",
        ]
        arguments += self.arguments.map { "--exec-arg=\($0)" }
        if let interactiveMode { arguments.append("--exec-interactive-mode=\(interactiveMode)") }
        return arguments
    }

    /// `kubectl config set-context …`: the context keeps its namespace and other members.
    public var setContextArguments: [String] {
        ["config", "set-context", cluster, "--cluster=\(cluster)", "--user=\(userName)"]
    }

    private static func quoted(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(text), as: UTF8.self)) ?? "\"\""
    }
}
