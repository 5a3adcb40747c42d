import Foundation
import LatchkeyBrokerWire
import LatchkeyVault
import LatchkeyBroker
import LatchkeyAccounts

extension Composition {
    /// The ID token of `selector`'s account exactly as `token --id-token` gives it: the agent's
    /// when one answers, else this machine's, refreshed or signed in again first when it must be
    /// and released only as `confirm` allows. For the commands that hand the ID token to a cloud
    /// or to OpenBao (`gcp-credential`, `openbao-token`).
    func idToken(
        of selector: String, minimumLifetime: MinimumLifetimeOptions, signingInWith interaction: CommandLineInteraction?
    ) async throws -> Secret {
        let request = ThroughAgent.tokenRequest(selector, minimumLifetime: minimumLifetime.seconds, tokens: .id)
        if let answer = try ThroughAgent.ask(request, context: self), let token = answer.idToken { return token }
        let record = try await service.validRecord(
            for: AccountSelector(parsing: selector), minimumLifetime: minimumLifetime.interval, signingInWith: interaction)
        return try service.token(of: record, idToken: true)
    }
}
