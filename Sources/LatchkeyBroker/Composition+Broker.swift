import Foundation
public import LatchkeyAccounts
import LatchkeyBrokerWire
import LatchkeyKeystore
import LatchkeyProviders

/// Someone at a command's terminal, who can sign in, approve a release of a `confirm = true`
/// account and accept more scope: the command line's terminal interaction.
public typealias BrokerPerson = SignInInteraction & ReleaseApproval & ScopeApproval

extension Composition {
    /// The broker a command asks for its credential: the agent when `LATCHKEY_AGENT` names one
    /// or the default socket exists (`AgentBroker`, which falls back to this machine where no
    /// agent answers), else this machine's keystore (`LocalBroker` at the command's door).
    /// `person` is whoever can sign in and approve at the command's terminal; `nil` for a
    /// command nobody watches.
    public func broker(person: (any BrokerPerson)?, say: @escaping @Sendable (String) -> Void) -> any Broker {
        let local = localBroker(person: person, say: say)
        guard let endpoint = AgentSocket.endpoint({ environment[$0] }) else { return local }
        return AgentBroker(
            endpoint: endpoint, local: local, localVault: keystore.location, hasTerminal: { person != nil }, say: say)
    }

    /// This machine's broker at a command's door: releases asked of `person`, logged as the
    /// agent logs (a log that cannot be written is said, never fatal).
    func localBroker(person: (any BrokerPerson)?, say: @escaping @Sendable (String) -> Void) -> LocalBroker {
        let readable = (try? configuration.get()) != nil
        let configuration = (try? self.configuration.get()) ?? LatchkeyConfiguration()
        let service = self.service
        let environment = self.environment
        let log = ReleaseLog(path: ReleaseLog.defaultPath(environment: environment))
        return LocalBroker(
            settings: {
                BrokerSettings(
                    configuration: configuration, configurationReadable: readable, catalog: service.catalog,
                    hooks: service.hooks ?? Hooks(settings: configuration.hooks, environment: environment, report: say))
            },
            accounts: { _, _ in service }, door: .command(person: person),
            log: { entry in if let problem = log.append(entry) { say("warning: " + problem) } }, memory: LocalBroker.Memory(), say: say)
    }
}

extension LocalBroker.Door {
    /// A command's door on this machine: the person at its terminal (`nil`: nobody) signs in,
    /// approves releases and accepts more scope.
    public static func command(person: (any BrokerPerson)?) -> LocalBroker.Door {
        LocalBroker.Door(
            kind: .command, requester: Requester.parentOfThisProcess(),
            ask: { account, requester, seconds in
                guard let person else { return .nobodyToAsk }
                let answer = await person.approveRelease(of: account, to: requester.description, within: seconds)
                return answer.map { $0 ? .approved : .denied } ?? .timedOut
            },
            person: person, scopes: person)
    }
}
