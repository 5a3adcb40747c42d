// A test driver for the vault's durability and locking guarantees (Tests/e2e/test_vault_durability.py):
// it writes records through the public keystore API and reports each write once it is done, so
// the tests can kill it at any instant and check that every reported write survived.
//
//   latchkey-vault-stress write VAULT PREFIX COUNT   one update per record PREFIX-0 ... PREFIX-(COUNT-1);
//                                                    prints each index after its update returned
//   latchkey-vault-stress seed VAULT PROVIDER [--no-refresh-token] SUBJECT[:NAME][@EXPIRY]...
//                                                    replaces the records with accounts at PROVIDER
//                                                    (token fake-access-SUBJECT, expiry in Unix seconds),
//                                                    for the fast-path, stored-value and hook tests
//   latchkey-vault-stress list VAULT                 prints every record's subject, one per line
//   latchkey-vault-stress bench VAULT ACCOUNTS RUNS  fills a new vault with ACCOUNTS records and prints the
//                                                    medians of open+decrypt+decode, one save, and the KDF
//                                                    (benchmarks/vault.sh)
//
// The passphrase comes from LATCHKEY_PASSPHRASE_FILE; the key is cached in the kernel keyring.
import CLatchkeySys
import Foundation
import LatchkeyBroker
import LatchkeyKeystore
import LatchkeyVault

@main
struct VaultStress {
    static func main() async {
        _ = lk_harden_process()
        let arguments = CommandLine.arguments
        guard let passphraseFile = ProcessInfo.processInfo.environment["LATCHKEY_PASSPHRASE_FILE"] else {
            fail("set LATCHKEY_PASSPHRASE_FILE")
        }
        do {
            switch arguments.dropFirst().first {
            case "write" where arguments.count == 5:
                guard let count = Int(arguments[4]) else { fail("COUNT must be a number") }
                let vault = VaultKeystore(path: arguments[2], passphrase: PassphraseFile(path: passphraseFile), cacheKey: true)
                for index in 0..<count {
                    try await vault.update { records in records.append(record(subject: "\(arguments[3])-\(index)")) }
                    // Unbuffered: a line written here is a write that has completed.
                    FileHandle.standardOutput.write(Data("\(index)\n".utf8))
                }
            case "seed" where arguments.count >= 5:
                // seed VAULT PROVIDER SUBJECT[:NAME]...: accounts with chosen subjects and names,
                // written through the keystore the commands open (VAULT must be its file), so the
                // launcher's token copies follow the release policy as after any command.
                let composition = Composition(
                    environment: ProcessInfo.processInfo.environment, passphrase: PassphraseFile(path: passphraseFile))
                let vault = composition.keystore
                guard vault.location == arguments[2] else { fail("VAULT must be the vault of this environment (XDG_DATA_HOME)") }
                let withoutRefreshToken = arguments[4] == "--no-refresh-token"
                let specs = arguments.dropFirst(withoutRefreshToken ? 5 : 4)
                try await vault.update { records in
                    records = specs.map { spec in
                        let (account, expiry) = spec.split(separator: "@", maxSplits: 1).map(String.init).splitFirst()
                        let parts = account.split(separator: ":", maxSplits: 1).map(String.init)
                        var seeded = record(subject: parts[0], provider: arguments[3])
                        seeded.displayName = parts.count > 1 ? parts[1] : nil
                        if let expiry, let seconds = Double(expiry) { seeded.expiresAt = Date(timeIntervalSince1970: seconds) }
                        if withoutRefreshToken { seeded.refreshToken = nil }
                        return seeded
                    }
                }
            case "list" where arguments.count == 3:
                let vault = VaultKeystore(path: arguments[2], passphrase: PassphraseFile(path: passphraseFile), cacheKey: true)
                for record in try await vault.records() { print(record.subject) }
            case "bench" where arguments.count == 5:
                guard let accounts = Int(arguments[3]), let runs = Int(arguments[4]), runs > 0 else {
                    fail("ACCOUNTS and RUNS must be numbers")
                }
                try await bench(vault: arguments[2], passphraseFile: passphraseFile, accounts: accounts, runs: runs)
            default:
                fail("usage: latchkey-vault-stress write VAULT PREFIX COUNT | list VAULT")
            }
        } catch {
            fail("\(error)")
        }
    }

    static func bench(vault path: String, passphraseFile: String, accounts: Int, runs: Int) async throws {
        let filler = VaultKeystore(path: path, passphrase: PassphraseFile(path: passphraseFile))
        try await filler.update { records in records = (0..<accounts).map { record(subject: "account-\($0)") } }
        var open: [Duration] = []
        var save: [Duration] = []
        var derive: [Duration] = []
        let clock = ContinuousClock()
        for _ in 0..<runs {
            // A new keystore each time: nothing cached in memory, the KDF runs from the passphrase.
            let fresh = VaultKeystore(path: path, passphrase: PassphraseFile(path: passphraseFile))
            derive.append(try await clock.measure { _ = try await fresh.records() })
            open.append(try await clock.measure { _ = try await fresh.records() })
            save.append(try await clock.measure { try await fresh.update { records in records[0].updatedAt = Date() } })
        }
        func median(_ values: [Duration]) -> String {
            let sorted = values.sorted()
            let seconds = sorted[sorted.count / 2] / .milliseconds(1)
            return String(format: "%.2f ms", seconds)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print("vault with \(accounts) accounts (\(size / 1024) KiB), median of \(runs):")
        print("  unlock (scrypt) + open + decrypt + decode: \(median(derive))")
        print("  open + decrypt + decode (key in memory):   \(median(open))")
        print("  one save (encode, encrypt, fsync, rename): \(median(save))")
    }

    static func record(subject: String, provider: String = "stress") -> AccountRecord {
        let now = Date()
        return AccountRecord(
            provider: provider, issuer: "https://issuer.invalid", subject: subject, displayName: subject,
            accessToken: Secret("fake-access-\(subject)"), tokenType: "Bearer", refreshToken: Secret("fake-refresh-\(subject)"),
            idToken: nil, expiresAt: now.addingTimeInterval(3600), scopes: ["openid"], createdAt: now, updatedAt: now)
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("latchkey-vault-stress: \(message)\n".utf8))
        exit(2)
    }
}

extension Array where Element == String {
    /// The first element and the second, if any.
    fileprivate func splitFirst() -> (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}
