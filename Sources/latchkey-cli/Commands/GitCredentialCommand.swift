import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyCredentialHelpers
import LatchkeyVault

/// `latchkey git-credential get|store|erase`: git's credential helper protocol
/// (gitcredentials(7)) over the providers' `git_hosts`.
struct GitCredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "A git credential helper: answers get with an access token for the hosts in the providers' git_hosts.",
        discussion:
            "Use it with git config --global credential.helper '!latchkey git-credential'. Hosts no provider maps, and protocols other than https, get no answer, so git asks its other helpers. store and erase do nothing: the account stays signed in. --resource replaces the provider's git_resource, and --scope narrows the token, as for token; with either, the vault is read here rather than through the agent."
    )

    @Argument(
        help: "The operation git asks for: get, store or erase (any other is ignored, as gitcredentials(7) asks).",
        completion: .list(["get", "store", "erase"]))
    var operation: String
    @OptionGroup var narrowing: NarrowingOptions
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let request = Self.readRequest()
            // store: the token is already in the vault. erase: git saw the token refused; the
            // account stays (a refresh or `latchkey login` fixes it, not forgetting it).
            guard operation == "get" else { return }
            // git's own stdin and stdout are not the person's: a sign-in happens on the terminal.
            let release = try await options.broker(person: CommandLineInteraction.atTerminal()).gitCredential(
                GitRequest(
                    attributes: request, minimumLifetime: minimumLifetime.seconds, narrowing: narrowing.narrowing,
                    workingDirectory: workingDirectory))
            if let credential = release.credential { FileHandle.standardOutput.write(Data(credential.exposedValue.utf8)) }
        }
    }

    /// git's request: lines up to a blank line or the end of input, whichever comes first.
    private static func readRequest() -> String {
        var lines: [String] = []
        while let line = readLine(strippingNewline: true), !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}
