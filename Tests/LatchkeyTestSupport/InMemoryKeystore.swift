import Foundation
public import LatchkeyKeystore
import LatchkeySupport
public import LatchkeyVault

/// A keystore held in memory: what a vault would store, without a file, a KDF or a lock file.
public actor InMemoryKeystore: TestKeystore {
    public private(set) var stored: [AccountRecord]
    /// The clients registered for Latchkey (RFC 7591).
    public private(set) var clients: [RegisteredClient] = []
    /// Counts `update` calls, so tests can tell a read from a write.
    public private(set) var updates = 0

    public init(_ records: [AccountRecord] = []) { stored = records }

    public nonisolated var backendName: String { "memory" }
    public func records() async throws(KeystoreError) -> [AccountRecord] { stored }

    public func update<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [AccountRecord]) async throws -> Result
    ) async throws -> Result {
        var records = await stored
        let result = try await body(&records)
        await replace(records)
        return result
    }

    public func updateAccount<Result: Sendable>(
        _ identity: AccountIdentity, isolation: isolated (any Actor)?, _ body: (inout AccountRecord?) async throws -> Result
    ) async throws -> Result {
        try await updatingOneRecord(identity, isolation: isolation, body)
    }

    public func registeredClients() async throws(KeystoreError) -> [RegisteredClient] { clients }

    public func updateRegisteredClients<Result: Sendable>(
        isolation: isolated (any Actor)?, _ body: (inout [RegisteredClient]) async throws -> Result
    ) async throws -> Result {
        var registered = await clients
        let result = try await body(&registered)
        await replaceClients(registered)
        return result
    }

    private func replaceClients(_ registered: [RegisteredClient]) {
        clients = registered
        updates += 1
    }

    private func replace(_ records: [AccountRecord]) {
        stored = records
        updates += 1
    }
}
