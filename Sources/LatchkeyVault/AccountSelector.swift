/// `PROVIDER[:ACCOUNT]` from the command line.
import LatchkeyEssentials

public struct AccountSelector: Sendable, Hashable, CustomStringConvertible {
    public var provider: String
    /// The account's display name (usually the email) or its subject; `nil` means "the only one".
    public var account: String?

    public init(provider: String, account: String? = nil) {
        self.provider = provider
        self.account = account
    }

    /// Splits at the first `:`; provider names cannot contain one, account names may. The one
    /// parser of selectors: the full command and the launcher (`LauncherRequest`) both call it,
    /// once per process.
    public init(parsing text: String) {
        if let colon = text.firstIndex(of: ":") {
            provider = String(text[..<colon])
            let rest = String(text[text.index(after: colon)...])
            account = rest.isEmpty ? nil : rest
        } else {
            provider = text
            account = nil
        }
    }

    /// The selector's one spelling (`p:` is `p`), under which the token copies are keyed.
    public var description: String { account.map { "\(provider):\($0)" } ?? provider }

    /// The one record this selector names: a bare `PROVIDER` names its only account, or its
    /// default one (`latchkey default`) when it has several.
    public func select(from records: [AccountRecord]) throws(AccountSelectionError) -> AccountRecord {
        records[try index(in: records)]
    }

    /// Where in `records` the one record this selector names is, by the rules of `select`.
    /// Positions rather than records, so the token copies can resolve every selector of a large
    /// vault without copying records or comparing them whole.
    package func index(in records: [AccountRecord]) throws(AccountSelectionError) -> Int {
        let atProvider = records.indices.filter { records[$0].provider == provider }
        let matching = account.map { name in atProvider.filter { records[$0].matches(selector: name) } } ?? atProvider
        guard !matching.isEmpty else { throw .notSignedIn(self, available: atProvider.map { records[$0].label }) }
        if matching.count == 1 { return matching[0] }
        let defaults = matching.filter { records[$0].isDefault == true }
        guard account == nil, defaults.count == 1 else { throw .ambiguous(self, candidates: matching.map { records[$0].label }) }
        return defaults[0]
    }
}

public enum AccountSelectionError: LatchkeyError, Equatable {
    case notSignedIn(AccountSelector, available: [String])
    case ambiguous(AccountSelector, candidates: [String])

    public var category: FailureCategory { .notFound }

    public var description: String {
        switch self {
        case .notSignedIn(let selector, let available):
            if available.isEmpty {
                return
                    "no account is signed in at \(TerminalText.sanitized(selector.provider, maxLength: 80)); run `latchkey login \(TerminalText.sanitized(selector.provider, maxLength: 80))`"
            }
            return "no account \(TerminalText.sanitized(selector.description, maxLength: 120)); signed in: "
                + available.map { TerminalText.sanitized($0, maxLength: 80) }.joined(separator: ", ")
        case .ambiguous(let selector, let candidates):
            return
                "\(TerminalText.sanitized(selector.provider, maxLength: 80)) has several accounts; name one as PROVIDER:ACCOUNT, or make one the default with `latchkey default PROVIDER:ACCOUNT` ("
                + candidates.map { TerminalText.sanitized($0, maxLength: 80) }.joined(separator: ", ") + ")"
        }
    }
}
