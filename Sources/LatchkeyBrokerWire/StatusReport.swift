public import FoundationEssentials
import LatchkeyEssentials
public import LatchkeyVault

/// `latchkey status --json`: identities and expiry, never a token.
public struct StatusReport: Encodable, Sendable {
    /// AWS credentials kept with an account (`aws-credential`): which role, until when; never a key.
    public struct AWSRole: Encodable, Sendable {
        public var roleARN, sessionName, stsEndpoint: String
        public var expiresAt: Date
        public var expiresIn: Int

        enum CodingKeys: String, CodingKey {
            case roleARN = "role_arn"
            case sessionName = "session_name"
            case stsEndpoint = "sts_endpoint"
            case expiresAt = "expires_at"
            case expiresIn = "expires_in"
        }

        /// One line under its account in `status`.
        public var summary: String {
            let when = expiresIn > 0 ? "expires in \(Account.duration(expiresIn))" : "expired \(Account.duration(-expiresIn)) ago"
            return "AWS \(TerminalText.sanitized(roleARN)) as \(TerminalText.sanitized(sessionName))  \(when)"
        }
    }

    public struct Account: Encodable, Sendable {
        public var provider, account, subject, issuer, keystore: String
        public var expiresAt: Date?
        public var expiresIn: Int?
        public var refreshToken: Bool
        public var secondFactor: String?
        public var lastError: String?
        /// The account a bare provider name selects (`latchkey default`).
        public var isDefault: Bool
        /// The tokens are DPoP-bound (RFC 9449): they go with a proof (`latchkey proof`).
        public var dpop = false
        /// The account config.toml maps its provider to in the working directory
        /// (`[directories."PATH"]`): what a bare provider name means here.
        public var appliesHere = false
        /// The AWS credentials kept with the account, soonest to expire first.
        public var awsCredentials: [AWSRole] = []

        enum CodingKeys: String, CodingKey {
            case provider, account, subject, issuer, keystore
            case isDefault = "default"
            case secondFactor = "second_factor"
            case expiresAt = "expires_at"
            case expiresIn = "expires_in"
            case refreshToken = "refresh_token"
            case lastError = "last_error"
            case appliesHere = "applies_here"
            case dpop
            case awsCredentials = "aws_credentials"
        }

        public func encode(to encoder: any Encoder) throws {
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
            try container.encode(appliesHere, forKey: .appliesHere)
            try container.encode(dpop, forKey: .dpop)
            try container.encode(awsCredentials, forKey: .awsCredentials)
        }

        public var summary: String {
            var text = TerminalText.sanitized(account) + (isDefault ? " (default)" : "") + (appliesHere ? " (applies here)" : "")
            if let expiresIn {
                text += expiresIn > 0 ? "  expires in \(Self.duration(expiresIn))" : "  expired \(Self.duration(-expiresIn)) ago"
            }
            text += refreshToken ? "  refresh token: yes" : "  refresh token: no"
            if dpop { text += "  DPoP-bound" }
            if let secondFactor { text += "  second factor: \(TerminalText.sanitized(secondFactor))" }
            text += "  [\(keystore)]"
            if let lastError { text += "\n    last error: \(TerminalText.sanitized(lastError))" }
            for role in awsCredentials { text += "\n    " + role.summary }
            return text
        }

        static func duration(_ seconds: Int) -> String {
            seconds >= 3600
                ? "\(seconds / 3600)h \(seconds % 3600 / 60)m" : seconds >= 60 ? "\(seconds / 60)m \(seconds % 60)s" : "\(seconds)s"
        }
    }

    public var accounts: [Account]

    /// `here` is the working directory and what config.toml maps there: the accounts it maps
    /// are marked.
    public init(records: [AccountRecord], keystore: String, now: Date, here: (accounts: DirectoryAccounts, path: String)? = nil) {
        var mapped: Set<Int> = []
        if let here {
            for provider in Set(records.map(\.provider)) {
                let selector = here.accounts.applying(to: AccountSelector(provider: provider), in: here.path)
                if selector.account != nil, let index = try? selector.index(in: records) { mapped.insert(index) }
            }
        }
        accounts = records.enumerated().map { index, record in
            Account(
                provider: record.provider, account: record.label, subject: record.subject, issuer: record.issuer, keystore: keystore,
                expiresAt: record.expiresAt, expiresIn: record.expiresAt.map { Int(wholeSeconds: $0.timeIntervalSince(now)) },
                refreshToken: record.refreshToken != nil, secondFactor: record.secondFactor, lastError: record.lastError,
                isDefault: record.isDefault == true, dpop: record.isProofBound, appliesHere: mapped.contains(index),
                awsCredentials: (record.awsCredentials ?? []).sorted { $0.expiresAt < $1.expiresAt }.map { kept in
                    AWSRole(
                        roleARN: kept.roleARN, sessionName: kept.sessionName, stsEndpoint: kept.endpoint, expiresAt: kept.expiresAt,
                        expiresIn: Int(wholeSeconds: kept.expiresAt.timeIntervalSince(now)))
                })
        }
    }

    /// The text `status --json` prints, the same from the launcher and from `latchkey-cli`.
    public func json() throws -> String { try ReportJSON.text(of: self) }
}

/// How every `--json` report is written: indented, keys sorted, dates in ISO 8601, slashes bare.
public enum ReportJSON {
    public static func text(of value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return escapingTerminalControls(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// JSON escapes only U+0000–U+001F inside strings; DEL, the C1 controls and the bidirectional
    /// marks that `TerminalText` makes inert can only stand inside strings here, so they become
    /// `\uXXXX`: the same JSON to a parser, and inert in a terminal.
    static func escapingTerminalControls(_ json: String) -> String {
        let isEscaped = { (scalar: Unicode.Scalar) in TerminalText.isControl(scalar) && !["\t", "\n", "\r"].contains(scalar) }
        guard json.unicodeScalars.contains(where: isEscaped) else { return json }
        var output = ""
        output.unicodeScalars.reserveCapacity(json.unicodeScalars.count)
        for scalar in json.unicodeScalars {
            // Tabs and line breaks outside strings are the layout (inside them the encoder escaped them).
            guard isEscaped(scalar) else {
                output.unicodeScalars.append(scalar)
                continue
            }
            let digits = String(scalar.value, radix: 16)
            output += "\\u" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        return output
    }
}
