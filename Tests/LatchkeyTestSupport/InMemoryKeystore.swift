public import LatchkeyCore
public import LatchkeyVault

/// A keystore held in memory: what a vault would store, without a file, a KDF or a lock file.
public actor InMemoryKeystore: Keystore {
    public private(set) var stored: [AccountRecord]
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

    private func replace(_ records: [AccountRecord]) {
        stored = records
        updates += 1
    }
}
