import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeyProviders
import LatchkeyVault

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show every account: who, where, and when its token expires.")

    @Flag(help: "Print JSON on stdout.") var json = false

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let reply = try await options.broker(person: nil).status(StatusRequest(workingDirectory: workingDirectory))
            if json { return Output.result(reply.report) }
            for warning in reply.warnings { Output.error("warning: " + warning) }
            if reply.lines.isEmpty {
                Output.info("No accounts signed in here. Sign in with `latchkey login PROVIDER` (see `latchkey providers`).")
            }
            reply.lines.forEach(Output.result)
        }
    }
}
