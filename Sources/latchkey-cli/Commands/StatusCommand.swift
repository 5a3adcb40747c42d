import ArgumentParser
import Foundation
import LatchkeyCore
import LatchkeyVault

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show every account: who, where, and when its token expires.")

    @Flag(help: "Print JSON on stdout.") var json = false

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let context = options.context()
            let records = try await context.keystore.records()
            let report = StatusReport(records: records, keystore: context.keystore.backendName, now: Date())
            if json {
                try Output.json(report)
                return
            }
            if records.isEmpty { Output.info("No accounts signed in. Sign in with `latchkey login PROVIDER` (see `latchkey providers`).") }
            for provider in context.catalog.providers {
                let accounts = report.accounts.filter { $0.provider == provider.name }
                Output.result(
                    "\(provider.name) — \(TerminalText.sanitized(provider.displayName))\(accounts.isEmpty ? " (signed out)" : "")")
                for account in accounts { Output.result("  " + account.summary) }
            }
            for account in report.accounts where !context.catalog.providers.contains(where: { $0.name == account.provider }) {
                Output.result("\(account.provider) — no longer configured\n  " + account.summary)
            }
        }
    }
}

/// `latchkey status --json`: identities and expiry, never a token.
struct StatusReport: Encodable {
    struct Account: Encodable {
        var provider, account, subject, issuer, keystore: String
        var expiresAt: Date?
        var expiresIn: Int?
        var refreshToken: Bool
        var secondFactor: String?
        var lastError: String?
        /// The account a bare provider name selects (`latchkey default`).
        var isDefault: Bool

        enum CodingKeys: String, CodingKey {
            case provider, account, subject, issuer, keystore
            case isDefault = "default"
            case secondFactor = "second_factor"
            case expiresAt = "expires_at"
            case expiresIn = "expires_in"
            case refreshToken = "refresh_token"
            case lastError = "last_error"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(provider, forKey: .provider)
            try container.encode(account, forKey: .account)
            try container.encode(subject, forKey: .subject)
            try container.encode(issuer, forKey: .issuer)
            try container.encode(keystore, forKey: .keystore)
            try container.encode(expiresAt, forKey: .expiresAt)
            try container.encode(expiresIn, forKey: .expiresIn)
            try container.encode(refreshToken, forKey: .refreshToken)
            try container.encode(secondFactor, forKey: .secondFactor)
            try container.encode(lastError, forKey: .lastError)
            try container.encode(isDefault, forKey: .isDefault)
        }

        var summary: String {
            var text = TerminalText.sanitized(account) + (isDefault ? " (default)" : "")
            if let expiresIn {
                text += expiresIn > 0 ? "  expires in \(Self.duration(expiresIn))" : "  expired \(Self.duration(-expiresIn)) ago"
            }
            text += refreshToken ? "  refresh token: yes" : "  refresh token: no"
            if let secondFactor { text += "  second factor: \(TerminalText.sanitized(secondFactor))" }
            text += "  [\(keystore)]"
            if let lastError { text += "\n    last error: \(TerminalText.sanitized(lastError))" }
            return text
        }

        static func duration(_ seconds: Int) -> String {
            seconds >= 3600
                ? "\(seconds / 3600)h \(seconds % 3600 / 60)m" : seconds >= 60 ? "\(seconds / 60)m \(seconds % 60)s" : "\(seconds)s"
        }
    }

    var accounts: [Account]

    init(records: [AccountRecord], keystore: String, now: Date) {
        accounts = records.map { record in
            Account(
                provider: record.provider, account: record.label, subject: record.subject, issuer: record.issuer, keystore: keystore,
                expiresAt: record.expiresAt, expiresIn: record.expiresAt.map { Int(wholeSeconds: $0.timeIntervalSince(now)) },
                refreshToken: record.refreshToken != nil, secondFactor: record.secondFactor, lastError: record.lastError,
                isDefault: record.isDefault == true)
        }
    }
}
