import ArgumentParser
import Foundation
import LatchkeyCredentialHelpers
import LatchkeyVault

/// `latchkey kubeconfig SELECTOR --cluster NAME [--write]`: the kubeconfig entries that have
/// kubectl ask `latchkey kubectl-credential` for the cluster's token.
struct KubeconfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubeconfig",
        abstract:
            "Print (or with --write, add) the kubeconfig user whose exec runs latchkey kubectl-credential, and a context for the cluster.",
        discussion:
            "The user is named latchkey-SELECTOR; the context, named after the cluster, ties the cluster to it. --write has kubectl add both (kubectl config set-credentials and set-context) after copying the file to FILE.latchkey-backup-TIME; the cluster must already be in the file."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @Option(help: "The cluster's name in the kubeconfig (clusters[].name).") var cluster: String
    @Option(
        name: .customLong("api-version"),
        help: "The ExecCredential version: v1beta1 (kubectl 1.11 and later, the default) or v1 (kubectl 1.22 and later).",
        completion: .list(["v1beta1", "v1"]))
    var apiVersion: String = "v1beta1"
    @Option(help: "How kubectl starts Latchkey: a name it finds on its PATH, or an absolute path.") var command = "latchkey"
    @Flag(help: "Add the entries to the kubeconfig with kubectl, after a backup, instead of printing them.") var write = false
    @Option(help: "With --write: the kubeconfig file to change (default: $KUBECONFIG when it names one file, else ~/.kube/config).")
    var kubeconfig: String?

    var version: ExecCredentialAPIVersion? { ExecCredentialAPIVersion(rawValue: "client.authentication.k8s.io/" + apiVersion) }

    func validate() throws {
        if version == nil { throw ValidationError("--api-version must be v1beta1 or v1") }
        if cluster.isEmpty { throw ValidationError("--cluster must name a cluster of the kubeconfig") }
        if AccountSelector(parsing: selector).provider.isEmpty {
            throw ValidationError("name a provider, such as `latchkey kubeconfig google --cluster prod`")
        }
        if kubeconfig != nil && !write { throw ValidationError("--kubeconfig names the file --write changes; add --write") }
    }

    func run() async throws {
        try await Failure.reporting {
            let entry = KubeconfigEntry(
                selector: AccountSelector(parsing: selector), cluster: cluster, apiVersion: version ?? .v1beta1, command: command)
            guard write else {
                Output.result(String(entry.yaml.dropLast()))
                return
            }
            let environment = ProcessInfo.processInfo.environment
            let writer = KubeconfigWriter(
                file: try KubeconfigWriter.file(option: kubeconfig, environment: environment), environment: environment)
            let backup = try writer.write(entry)
            Output.info("Saved the kubeconfig as it was to \(backup).")
            Output.info(
                "Context \(cluster) now signs in to cluster \(cluster) as user \(entry.userName): kubectl --context \(cluster) get --raw /version"
            )
        }
    }
}
