import Foundation
import LatchkeyBroker

extension KeystoreOptions {
    /// The broker this command asks for its credential (`Composition.broker`), with `person` at
    /// its terminal to sign in and approve (`nil`: nobody).
    func broker(person: CommandLineInteraction?) -> any Broker {
        context().broker(person: person, say: { Output.error($0) })
    }
}

/// Where the command runs, for config.toml's `[directories."PATH"]`.
var workingDirectory: String { FileManager.default.currentDirectoryPath }
