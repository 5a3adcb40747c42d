import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyCredentialHelpers
import LatchkeyProviders
import LatchkeyVault

/// `docker-credential-latchkey ACTION` (the launcher runs `latchkey docker-credential ACTION`
/// under that name): the Docker credential-helper protocol over the providers' `registry_hosts`,
/// for docker, podman, skopeo and buildah.
///
/// stdout is the protocol's: the answer, or the line that says why there is none, which clients
/// quote in their own error (errors go there, not to stderr, as the protocol's own helpers do).
struct DockerCredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker-credential",
        abstract:
            "A container credential helper (docker-credential-latchkey): get answers with an access token for the hosts in the providers' registry_hosts.",
        discussion:
            "Name it per registry in credHelpers of ~/.docker/config.json or containers' auth.json: { \"credHelpers\": { \"registry.example.com\": \"latchkey\" } }. list names every host in registry_hosts. store and erase change nothing: Latchkey owns these credentials, and says so on stderr without failing docker login or logout."
    )

    @Argument(help: "The client's action: get, list, store or erase.", completion: .list(CredentialHelperRequest.actions))
    var action: String
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            do {
                try await answer()
            } catch let error as any LatchkeyError {
                Output.result("latchkey: " + error.description)
                throw ExitCode(Failure.exitCode(for: error.category))
            }
        }
    }

    private func answer() async throws {
        let input = action == "list" ? [] : Self.readInput()
        let request = try CredentialHelperRequest(action: action, input: input)
        let service = options.context().service
        switch request {
        case .get(let server):
            // The broker maps the registry to a provider with its provider files (the agent's,
            // so a forwarded host needs none); the client owns stdin and stdout.
            let release = try await options.broker(person: CommandLineInteraction.atTerminal()).registryCredential(
                RegistryRequest(server: server.text, minimumLifetime: minimumLifetime.seconds, workingDirectory: workingDirectory))
            guard let token = release.token, let username = release.username else {
                // The protocol's "nothing here": the client goes on without credentials.
                Output.result(RegistryCredential.notFoundMessage)
                throw ExitCode(Failure.exitCode(for: .notFound))
            }
            try Output.json(RegistryCredential(serverURL: server.text, username: username, secret: token))
        case .list:
            try Output.json(RegistryCredential.listing(of: service.catalog.providers))
        case .store(let server), .erase(let server):
            let owner = (try? server.provider(in: service.catalog.providers))??.name
            Output.info(
                "latchkey: nothing to \(action) for \(server.host): "
                    + (owner.map { "Latchkey signs in to it itself (registry_hosts of provider \($0))" }
                        ?? "no provider lists it in registry_hosts, and Latchkey keeps no other registry passwords"))
        }
    }

    /// The request on stdin, read to its end (at most one byte past the limit, which the parser refuses).
    private static func readInput() -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count <= CredentialHelperRequest.inputLimit, let chunk = try? FileHandle.standardInput.read(upToCount: 4096),
            !chunk.isEmpty
        {
            bytes += chunk
        }
        return bytes
    }
}
