import CLatchkeySys
import Foundation
import LatchkeySecondFactor
import LatchkeySupport
import LatchkeyTestSupport

@testable import LatchkeyAccounts
@testable import LatchkeyBroker
@testable import LatchkeyBrokerWire
@testable import LatchkeyOAuth
@testable import LatchkeyProviders
@testable import LatchkeyVault

/// One machine for the broker's rules: alice signed in at corp (a `FakeAuthorizationServer`), its
/// provider file and config.toml on disk where the agent reads them, and both brokers over the
/// one keystore: this machine's (`LocalBroker`, in this process) and the agent's (a real `Agent`
/// on sockets in a private directory, asked through `AgentBroker`).
final class BrokerBench {
    /// Where a request comes from: a program on this machine, or a host reached with `ssh -R`.
    enum Door: String, CaseIterable, Sendable {
        case local
        case forwarded
    }

    /// The broker a case is run against.
    enum Implementation: String, CaseIterable, Sendable {
        /// `LocalBroker` in this process: a command without an agent (or the agent's forwarded
        /// door, for a forwarded case).
        case inProcess = "in process"
        /// `AgentBroker` through a running `Agent`'s local or forwarded socket.
        case throughAgent = "through the agent"
    }

    let directory: TemporaryDirectory
    let server: FakeAuthorizationServer
    let keystore = InMemoryKeystore()
    let service: AccountService
    let composition: Composition
    /// The in-process broker's memory (`ForcedRefresh`, `ScopeStepUp`), kept for a case's steps
    /// as an agent keeps its own.
    let memory = LocalBroker.Memory()
    private var agent: (agent: Agent, running: Task<Void, any Error>)?

    /// `providerLines` go into corp's provider file after its endpoints; `configuration` is
    /// config.toml.
    init(providerLines: String = "", configuration: String = "") async throws {
        directory = try TemporaryDirectory()
        server = FakeAuthorizationServer(clock: FixedClock(Date()))
        try directory.write(
            "config/latchkey/providers.d/corp.toml",
            """
            display_name = "Corp"
            kind = "oidc"
            issuer = "https://corp.example"
            authorization_endpoint = "https://corp.example/authorize"
            token_endpoint = "https://corp.example/token"
            revocation_endpoint = "https://corp.example/revoke"
            userinfo_endpoint = "https://corp.example/userinfo"
            jwks_uri = "https://corp.example/jwks"
            client_id = "client-corp"
            scopes = ["openid", "email"]
            redirect_path = "/oauth2redirect/corp"
            \(providerLines)
            """)
        try directory.write("config/latchkey/config.toml", configuration)
        let environment = [
            "XDG_CONFIG_HOME": directory.path + "/config", "XDG_DATA_HOME": directory.path + "/data",
            "XDG_STATE_HOME": directory.path + "/state", "XDG_CACHE_HOME": directory.path + "/cache",
            "LATCHKEY_PROVIDERS_DIR": directory.path + "/config/latchkey/providers.d",
        ]
        let catalog = Composition.loadCatalog(environment: environment)
        guard catalog.errors.isEmpty else { throw BenchError.providerFile(catalog.errors.map(\.description)) }
        service = AccountService(
            catalog: catalog, keystore: keystore, engine: OAuthEngine(transport: server.transport, clock: server.clock),
            browser: server.browser, listeners: server.listeners)
        let parsed = try LatchkeyConfiguration.load(path: directory.path + "/config/latchkey/config.toml", environment: environment)
        composition = Composition(environment: environment, configuration: parsed, keystore: keystore, service: service)
        _ = try await service.signIn(provider: try catalog.provider(named: "corp"), interaction: ScriptedPerson { _, _ in .cancel })
    }

    enum BenchError: Error {
        case providerFile([String])
        case agentDidNotListen
    }

    /// The agent, once a broker through it was asked for.
    var runningAgent: Agent? { agent?.agent }

    var localSocket: String { directory.path + "/agent.sock" }
    var forwardSocket: String { directory.path + "/forward.sock" }

    /// The broker `implementation` offers at `door`.
    func broker(_ implementation: Implementation, at door: Door) async throws -> any Broker {
        switch implementation {
        case .inProcess:
            let kind: ReleaseDecision.Door = door == .local ? .command : .agent(forwarded: true)
            let configuration = (try? composition.configuration.get()) ?? LatchkeyConfiguration()
            let service = self.service
            let environment = composition.environment
            return LocalBroker(
                // The provider files as they are now, read again for each request as the agent does.
                settings: {
                    BrokerSettings(
                        configuration: configuration, catalog: Composition.loadCatalog(environment: environment),
                        hooks: Hooks(settings: configuration.hooks, environment: [:], report: { _ in }))
                },
                accounts: { _, _ in service },
                door: LocalBroker.Door(kind: kind, requester: Requester.parentOfThisProcess(), ask: { _, _, _ in .nobodyToAsk }),
                log: { _ in }, memory: memory, say: { _ in })
        case .throughAgent:
            try await startAgent()
            // Nothing to fall back on: a failure to reach the agent is the test's failure.
            let unreachable = LocalBroker.atCommand(
                AccountService(
                    catalog: ProviderCatalog(providers: [], errors: []), keystore: InMemoryKeystore(),
                    engine: OAuthEngine(transport: RecordingTransport()), browser: FakeBrowser()))
            return AgentBroker(
                endpoint: AgentSocket.Endpoint(path: door == .local ? localSocket : forwardSocket, isExplicit: true),
                local: unreachable, localVault: nil, hasTerminal: { false }, say: { _ in })
        }
    }

    /// Starts the agent once, and waits until both its sockets answer.
    private func startAgent() async throws {
        if agent != nil { return }
        let agent = Agent(
            composition: composition, options: Agent.Options(socket: localSocket, forwardSocket: forwardSocket, say: { _ in }))
        let running = Task { try await agent.run() }
        self.agent = (agent, running)
        // Until each socket takes a connection: its file appears at bind(2), before listen(2).
        for _ in 0..<500 {
            if [localSocket, forwardSocket].allSatisfy(Self.accepts) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw BenchError.agentDidNotListen
    }

    /// Whether something listens at the Unix socket `path` (a connection made and closed at once).
    private static func accepts(_ path: String) -> Bool {
        let descriptor = lk_unix_connect(path)
        guard descriptor >= 0 else { return false }
        Glibc.close(descriptor)
        return true
    }

    /// Stops the agent, if one ran, and removes the directory.
    func close() async {
        if let agent {
            agent.agent.stop()
            _ = await agent.running.result
        }
        directory.remove()
    }

    /// Makes corp's provider file one that does not parse.
    func breakProviderFile() throws {
        try directory.write("config/latchkey/providers.d/corp.toml", "display_name = \"Corp\"\nkind = \n")
    }

    /// The refresh grants corp's token endpoint has answered.
    var refreshGrants: [HTTPRequest] { server.transport.sent(to: "/token").filter { $0.form["grant_type"] == "refresh_token" } }

    /// The scopes alice's account holds now.
    func storedScopes() async throws -> [String] { try await keystore.records().first?.scopes ?? [] }
}
