public import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// A stronger or fresher authentication asked for with `--acr` and `--max-age` (OIDC Core
/// §3.1.2.1 `acr_values`, `max_age`): sent with the authorization request, and checked against
/// the ID token's `acr` and `auth_time` (§2), both of the account kept and of a new sign-in.
public struct StepUp: Sendable, Equatable {
    /// `acr_values`: any one of them will do.
    public var acrValues: [String]
    /// `max_age` in seconds.
    public var maxAge: Int?

    public init(acrValues: [String] = [], maxAge: Int? = nil) {
        self.acrValues = acrValues
        self.maxAge = maxAge
    }

    public var isEmpty: Bool { acrValues.isEmpty && maxAge == nil }

    /// The authorization request's parameters for it.
    var parameters: [(String, String)] {
        var items: [(String, String)] = []
        if !acrValues.isEmpty { items.append(("acr_values", acrValues.joined(separator: " "))) }
        if let maxAge { items.append(("max_age", String(maxAge))) }
        return items
    }

    /// What `record`'s ID token fails to show at `now`, or `nil` when it satisfies this. The ID
    /// token was verified when it was stored or received, so its claims are only read here.
    public func problem(with record: AccountRecord, at now: Date) -> StepUpError? {
        guard !isEmpty else { return nil }
        let claims = record.idToken.flatMap(Claims.init(of:)) ?? Claims()
        let label = record.label
        if !acrValues.isEmpty {
            guard let acr = claims.acr, acrValues.contains(acr) else {
                return .acr(asked: acrValues, got: claims.acr, account: label, provider: record.provider)
            }
        }
        if let maxAge {
            guard let authTime = claims.authTime else { return .noAuthTime(account: label, provider: record.provider) }
            if now.timeIntervalSince1970 - authTime > Double(maxAge) {
                return .tooOld(maxAge: maxAge, account: label, provider: record.provider)
            }
        }
        return nil
    }

    /// The two claims step-up reads from an ID token that was verified when it was received.
    struct Claims: Decodable {
        /// `acr` (OIDC Core §2)
        var acr: String?
        /// `auth_time` (OIDC Core §2), seconds since the epoch.
        var authTime: Double?

        enum CodingKeys: String, CodingKey {
            case acr
            case authTime = "auth_time"
        }

        init() {}

        init?(of token: Secret) {
            let parts = token.exposedValue.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])),
                let claims = try? JSONDecoder().decode(Self.self, from: Data(payload))
            else { return nil }
            self = claims
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            acr = container.lenient(forKey: .acr)
            authTime = container.lenientNumber(forKey: .authTime)
        }
    }
}

/// Why an account's sign-in is not strong or recent enough for `--acr` / `--max-age`.
public enum StepUpError: LatchkeyError, Equatable {
    case acr(asked: [String], got: String?, account: String, provider: String)
    case noAuthTime(account: String, provider: String)
    case tooOld(maxAge: Int, account: String, provider: String)

    public var category: FailureCategory { .rejected }

    /// The account only a stronger or fresher sign-in can help.
    public var account: (provider: String, name: String) {
        switch self {
        case .acr(_, _, let account, let provider), .noAuthTime(let account, let provider), .tooOld(_, let account, let provider):
            return (provider, account)
        }
    }

    public var description: String {
        switch self {
        case .acr(let asked, let got, let account, let provider):
            let gotText = got.map { "\"\(TerminalText.sanitized($0, maxLength: 80))\"" } ?? "none"
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) signed in with authentication context (acr) \(gotText), not one of \(asked.map { TerminalText.sanitized($0, maxLength: 80) }.joined(separator: ", ")) as --acr asks"
        case .noAuthTime(let account, let provider):
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider): the ID token has no auth_time, so --max-age cannot be checked"
        case .tooOld(let maxAge, let account, let provider):
            return
                "\(TerminalText.sanitized(account, maxLength: 100)) at \(provider) authenticated more than \(maxAge) seconds ago (auth_time), as --max-age asks"
        }
    }
}
