/// The commands the launcher may answer without `latchkey-cli`, read from its command line once,
/// for both of its answers (the token copy, then the vault).
///
/// Only these exact shapes: anything else (another option, an option twice spelled otherwise, a
/// value the full command would refuse) is not a `LauncherRequest`, and the full command answers
/// with its own message.
public import LatchkeyVault

public enum LauncherRequest: Equatable, Sendable {
    /// `token SELECTOR [--min-ttl N] [--resource URI] [--scope "A B"]`: the selector as
    /// `AccountSelector(parsing:)` reads it, the only parser of `PROVIDER[:ACCOUNT]`, which the
    /// full command uses too; `narrowing` as the full command reads its options.
    case token(AccountSelector, minimumLifetime: Int, narrowing: TokenNarrowing? = nil)
    /// `status --json`.
    case statusJSON
    /// `mcp headers SELECTOR`: the access token as an agent's headers helper takes it, valid for
    /// the full command's default minute.
    case mcpHeaders(AccountSelector)

    public init?(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        switch rest.popFirst() {
        case "status" where rest.elementsEqual(["--json"]):
            self = .statusJSON
        case "mcp" where rest.count == 2 && rest.first == "headers":
            guard let selector = rest.last, !selector.hasPrefix("-"), !selector.isEmpty else { return nil }
            self = .mcpHeaders(AccountSelector(parsing: selector))
        case "token":
            guard let selector = rest.popFirst(), !selector.hasPrefix("-"), !selector.isEmpty else { return nil }
            var minimumLifetime: String?, resource: String?, scope: String?
            while let argument = rest.popFirst() {
                let name: Substring
                let value: String?
                if let equals = argument.firstIndex(of: "=") {
                    name = argument[..<equals]
                    value = String(argument[argument.index(after: equals)...])
                } else {
                    name = Substring(argument)
                    value = rest.popFirst()
                }
                // Each at most once: the full command says what it makes of a repeat.
                switch name {
                case "--min-ttl" where minimumLifetime == nil: minimumLifetime = value
                case "--resource" where resource == nil: resource = value
                case "--scope" where scope == nil: scope = value
                default: return nil
                }
                guard value != nil else { return nil }
            }
            var seconds = 60  // the full command's default
            if let minimumLifetime {
                // The full command takes an `Int`: a value it would refuse is not answered here either.
                guard let parsed = Int(minimumLifetime), parsed >= 0 else { return nil }
                seconds = parsed
            }
            var narrowing: TokenNarrowing?
            if resource != nil || scope != nil {
                let scopes = scope.map(TokenNarrowing.scopes) ?? []
                guard scope == nil || !scopes.isEmpty else { return nil }
                narrowing = TokenNarrowing(resource: resource, scopes: scopes)
            }
            self = .token(AccountSelector(parsing: selector), minimumLifetime: seconds, narrowing: narrowing)
        default:
            return nil
        }
    }
}
