import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyEssentials
import LatchkeyOAuth
import LatchkeyVault

struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Revoke an account's refresh token at the provider (RFC 7009) and forget the account.")

    @Argument(help: "PROVIDER or PROVIDER:ACCOUNT.", completion: Completions.providers) var selector: String

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let (record, revocation) = try await options.context().service.signOut(AccountSelector(parsing: selector))
            let name = "\(record.provider):\(TerminalText.sanitized(record.label))"
            switch revocation {
            case .success(.revoked(let kind)):
                Output.info("Revoked the \(kind.replacingOccurrences(of: "_", with: " ")) of \(name) and signed out.")
            case .success(.unsupported):
                Output.info(
                    "Signed out of \(name). The provider offers no revocation endpoint, so its tokens stay valid there until they expire.")
            case .failure(let error):
                Output.info("Signed out of \(name), but revocation failed: \(Failure.describe(error))")
            }
        }
    }
}
