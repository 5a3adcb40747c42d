import Foundation
public import LatchkeyVault

/// `latchkey keystore migrate`: moves every account and registered client of one keystore
/// (`source`) into another (`target`), one at a time, each written, read back and compared
/// before it is removed from the source.
///
/// Every step is one keystore `updateAccount` (or client `update`) of its own, so a run stopped anywhere leaves each account
/// in at least one keystore (both, between its write and its removal), and running it again
/// finishes: what the target already holds is recognised by its identity and never duplicated.
/// Clients go first (an account refreshes with its provider's registered client) and leave the
/// source last, once no account of their provider is left there.
public struct KeystoreMigration: Sendable {
    public let source: any Keystore
    public let target: any Keystore

    public init(from source: any Keystore, to target: any Keystore) {
        self.source = source
        self.target = target
    }

    /// What became of one account or client.
    public enum Outcome: Sendable, Equatable {
        /// The target had none: written there, removed here.
        case moved
        /// The target had an older copy (by `updatedAt`): replaced, removed here.
        case replacedOlder
        /// The target had the same one: removed here (a run interrupted before its removal).
        case alreadyThere
        /// The target had a newer one (or one as new): kept, the older one removed here.
        case keptNewer
        /// It changed here while it was moved (a refresh): left here; running again moves it.
        case changedMeanwhile
        /// The target has another client registered for the provider, whose accounts' tokens
        /// belong to the client here: left here.
        case otherClient

        /// Whether it is gone from the source.
        public var isDone: Bool { self != .changedMeanwhile && self != .otherClient }

        public var description: String {
            switch self {
            case .moved: return "moved"
            case .replacedOlder: return "moved, replacing an older copy there"
            case .alreadyThere: return "already there"
            case .keptNewer: return "already there, kept the newer copy there"
            case .changedMeanwhile: return "left here: it changed while it was moved; run the command again"
            case .otherClient: return "left here: the target has another client registered for its provider"
            }
        }
    }

    /// One line of the report: an account (`provider`, its label) or a provider's registered client.
    public struct Step: Sendable, Equatable {
        public enum Item: Sendable, Equatable {
            case account(provider: String, label: String)
            case client(provider: String)

            public var isAccount: Bool { if case .account = self { true } else { false } }
        }
        public var item: Item
        public var outcome: Outcome
    }

    /// Why a migration stopped. The account it was moving is in the source still (and perhaps in
    /// the target too); running again goes on from there.
    public enum Problem: LatchkeyError, Equatable {
        /// What the target read back is not what was written.
        case notVerified(what: String, target: String)

        public var category: FailureCategory { .keystore }

        public var description: String {
            switch self {
            case .notVerified(let what, let target):
                return
                    "\(what) was written to \(target) but reads back differently there; it was kept here and the migration stopped. Check \(target), then run the command again"
            }
        }
    }

    /// Moves everything, calling `report` after each account and client; returns every step.
    /// A keystore that fails stops the run with its error, the steps before it done.
    @discardableResult
    public func run(report: (Step) -> Void = { _ in }) async throws -> [Step] {
        var steps: [Step] = []
        func record(_ step: Step) {
            steps.append(step)
            report(step)
        }
        let clients = try await source.registeredClients()
        let accounts = try await source.records()
        // Nothing to move asks for nothing (a new vault's passphrase).
        guard !clients.isEmpty || !accounts.isEmpty else { return [] }
        try await target.prepareForWriting()
        // Read once: each move then reads and writes its own account alone (a shared keystore
        // does not read every account again for each one).
        var targetDefaults = Set(try await target.records().filter { $0.isDefault == true }.map(\.provider))
        var copied: [String: Outcome] = [:]
        var otherClient = Set<String>()
        for client in clients {
            let outcome = try await copy(client)
            copied[client.provider] = outcome
            if outcome == .otherClient {
                otherClient.insert(client.provider)
                record(Step(item: .client(provider: client.provider), outcome: outcome))
            }
        }
        for account in accounts {
            let item = Step.Item.account(provider: account.provider, label: account.label)
            if otherClient.contains(account.provider) {
                record(Step(item: item, outcome: .otherClient))
                continue
            }
            let (outcome, kept) = try await move(account, targetHasDefault: targetDefaults.contains(account.provider))
            if kept.isDefault == true { targetDefaults.insert(account.provider) }
            record(Step(item: item, outcome: outcome))
        }
        let left = Set(try await source.records().map(\.provider))
        for client in clients where !otherClient.contains(client.provider) {
            // Its accounts still here refresh with it (one changed meanwhile, or was signed in).
            guard !left.contains(client.provider) else {
                record(Step(item: .client(provider: client.provider), outcome: .changedMeanwhile))
                continue
            }
            let removed: Bool = try await source.updateRegisteredClients { clients in
                guard let index = clients.firstIndex(of: client) else { return false }
                clients.remove(at: index)
                return true
            }
            record(Step(item: .client(provider: client.provider), outcome: removed ? copied[client.provider] ?? .moved : .changedMeanwhile))
        }
        // The launcher must not go on answering from copies of accounts that now live elsewhere.
        if !steps.isEmpty { source.lock() }
        return steps
    }

    // MARK: - One account, one client

    /// Writes `account` to the target by `merge`, reads it back, then removes it from the source
    /// unless it changed there meanwhile. Returns the outcome and what the target holds.
    func move(_ account: AccountRecord, targetHasDefault: Bool) async throws -> (Outcome, AccountRecord) {
        let (outcome, kept) = try await target.updateAccount(account.identity) { there in
            Self.merge(account, into: &there, targetHasDefault: targetHasDefault)
        }
        guard let there = try await target.record(account.identity), there == kept || there.updatedAt > kept.updatedAt else {
            throw Problem.notVerified(what: "\(account.provider) account \(account.label)", target: target.backendName)
        }
        let done: Outcome = try await source.updateAccount(account.identity) { record in
            guard let here = record else { return outcome }
            guard here == account else { return .changedMeanwhile }
            record = nil
            return outcome
        }
        return (done, kept)
    }

    /// Writes `client` to the target by `merge` and reads it back; the source keeps it.
    func copy(_ client: RegisteredClient) async throws -> Outcome {
        let (outcome, kept) = try await target.updateRegisteredClients { clients in Self.merge(client, into: &clients) }
        guard outcome != .otherClient else { return outcome }
        guard let there = try await target.registeredClient(for: client.provider), there == kept || there.registeredAt > kept.registeredAt
        else { throw Problem.notVerified(what: "the client registered for \(client.provider)", target: target.backendName) }
        return outcome
    }

    // MARK: - The merge rule

    /// Puts `record` where the target keeps its account (`there`, `nil` when it has none) unless
    /// a copy as new or newer is there already: one account is one identity (provider, issuer,
    /// subject), so it is never duplicated, and of two copies the one refreshed last
    /// (`updatedAt`) holds the live refresh token. On a tie the target's stays. The target's
    /// default choices stand: a replaced copy keeps the target's `isDefault`, and a new account
    /// is not made its provider's default where the target has one (`targetHasDefault`).
    /// Returns the outcome and the record the target now holds for the account.
    static func merge(_ record: AccountRecord, into there: inout AccountRecord?, targetHasDefault: Bool) -> (Outcome, AccountRecord) {
        var incoming = record
        guard let current = there else {
            if targetHasDefault { incoming.isDefault = nil }
            there = incoming
            return (.moved, incoming)
        }
        incoming.isDefault = current.isDefault
        if current == incoming { return (.alreadyThere, incoming) }
        // The openbao journal wrote this move back without its access and ID tokens
        // (`OpenBaoJournal.Entry`): the same grant, which the whole record replaces.
        if current.accessToken.exposedValue.isEmpty, current.refreshToken == incoming.refreshToken,
            current.updatedAt == incoming.updatedAt
        {
            there = incoming
            return (.alreadyThere, incoming)
        }
        if current.updatedAt >= record.updatedAt { return (.keptNewer, current) }
        there = incoming
        return (.replacedOlder, incoming)
    }

    /// Puts `client` into `clients` (the target's), one per provider: a client with another
    /// `client_id` is `otherClient` and left alone (the source's accounts hold tokens of theirs);
    /// for the same `client_id`, the later registration stays.
    static func merge(_ client: RegisteredClient, into clients: inout [RegisteredClient]) -> (Outcome, RegisteredClient) {
        guard let index = clients.firstIndex(where: { $0.provider == client.provider }) else {
            clients.append(client)
            return (.moved, client)
        }
        let there = clients[index]
        if there == client { return (.alreadyThere, there) }
        if there.clientID != client.clientID { return (.otherClient, there) }
        if there.registeredAt >= client.registeredAt { return (.keptNewer, there) }
        clients[index] = client
        return (.replacedOlder, client)
    }
}
