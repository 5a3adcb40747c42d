import FoundationEssentials

/// What the vault's sealed box holds: the records as JSON, dates as Unix seconds, keys sorted,
/// and beside them the clients Latchkey registered for itself (`clients`, absent from vaults
/// written before dynamic registration, which read as none).
///
/// One definition for the full command and the launcher, which reads the vault itself when the
/// kernel keyring holds the key but no copy of the token (`UnlockedVaultAnswer`).
package enum VaultContents {
    private struct Contents: Codable {
        var accounts: [AccountRecord]
        var clients: [RegisteredClient]?
    }

    /// Only the registered clients: the accounts are skipped, not decoded.
    private struct Clients: Decodable {
        var clients: [RegisteredClient]?
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    package static func encode(_ records: [AccountRecord], clients: [RegisteredClient] = []) throws -> [UInt8] {
        Array(try encoder.encode(Contents(accounts: records, clients: clients.isEmpty ? nil : clients)))
    }

    /// The registered clients; none in a vault written before they were kept.
    package static func decodeClients(_ plaintext: [UInt8]) throws -> [RegisteredClient] {
        try decoder.decode(Clients.self, from: Data(plaintext)).clients ?? []
    }

    /// `VaultRecordReader` first (a tenth of the time); `JSONDecoder` for anything it refuses, so
    /// the faster reader can never make a readable vault unreadable.
    package static func decode(_ plaintext: [UInt8]) throws -> [AccountRecord] {
        var reader = VaultRecordReader(plaintext)
        if let records = try? reader.records() { return records }
        return try decoder.decode(Contents.self, from: Data(plaintext)).accounts
    }
}
