import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyOAuth
import LatchkeyVault

/// `latchkey proof SELECTOR --method M --url U`: a DPoP proof (RFC 9449 §7) for one request with
/// the account's DPoP-bound access token, printed on stdout; the key stays in the vault.
struct ProofCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proof",
        abstract: "Print a DPoP proof for one request with a DPoP-bound account's access token.",
        discussion:
            "Send it as the DPoP header with `Authorization: DPoP TOKEN`, TOKEN being what `latchkey token` prints with the same --resource and --scope. Each proof is for one request: make a new one for the next."
    )

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT (the account's email/name or subject).", completion: Completions.providers)
    var selector: String
    @Option(help: "The request's HTTP method (htm), such as GET or POST.") var method: String
    @Option(help: "The request's URL (htu); its query and fragment are left out of the proof.") var url: String
    @Option(help: "The nonce the resource server asked for in its DPoP-Nonce header.") var nonce: String?
    @OptionGroup var narrowing: NarrowingOptions
    @OptionGroup var minimumLifetime: MinimumLifetimeOptions

    @OptionGroup var options: KeystoreOptions

    func validate() throws {
        guard !method.isEmpty, method.allSatisfy({ $0.isASCII && ($0.isUppercase || $0 == "-") }) else {
            throw ValidationError("--method must be an HTTP method in capitals, such as GET or POST")
        }
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), scheme == "https" || scheme == "http",
            target.host != nil
        else { throw ValidationError("--url must be an absolute http or https URL") }
        if let nonce, nonce.isEmpty || !nonce.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" && $0 != "\\" }) {
            throw ValidationError("--nonce must be the DPoP-Nonce value as the server sent it")
        }
    }

    func run() async throws {
        try await Failure.reporting {
            let broker = options.broker(person: CommandLineInteraction.atTerminal())
            let release = try await broker.token(
                TokenRequest(
                    selector: selector, minimumLifetime: minimumLifetime.seconds, narrowing: narrowing.narrowing,
                    workingDirectory: workingDirectory))
            let token = try release.requiredAccessToken()
            guard release.proofBound else { throw DPoPError.notBound(account: release.account, provider: release.provider) }
            let proof = try await broker.proof(
                ProofRequest(
                    selector: "\(release.provider):\(release.subject)", method: method, url: url, nonce: nonce,
                    tokenHash: DPoPKey.accessTokenHash(token), workingDirectory: workingDirectory))
            Output.token(proof.proof)
        }
    }
}
