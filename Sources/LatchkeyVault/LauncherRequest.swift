/// The commands the launcher may answer without `latchkey-cli`, read from its command line once,
/// for both of its answers (the token copy, then the vault).
///
/// Only these exact shapes: anything else (another option, an option twice spelled otherwise, a
/// value the full command would refuse) is not a `LauncherRequest`, and the full command answers
/// with its own message.
public enum LauncherRequest: Equatable, Sendable {
    /// `token SELECTOR [--min-ttl N]`: the selector as `AccountSelector(parsing:)` reads it, the
    /// only parser of `PROVIDER[:ACCOUNT]`, which the full command uses too.
    case token(AccountSelector, minimumLifetime: Int)
    /// `status --json`.
    case statusJSON

    public init?(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        switch rest.popFirst() {
        case "status" where rest.elementsEqual(["--json"]):
            self = .statusJSON
        case "token":
            guard let selector = rest.popFirst(), !selector.hasPrefix("-"), !selector.isEmpty else { return nil }
            var minimumLifetime = 60  // the full command's default
            while let option = rest.popFirst() {
                let value: String?
                if option == "--min-ttl" {
                    value = rest.popFirst()
                } else if option.hasPrefix("--min-ttl=") {
                    value = String(option.dropFirst("--min-ttl=".count))
                } else {
                    return nil
                }
                // The full command takes an `Int`: a value it would refuse is not answered here either.
                guard let value, let seconds = Int(value), seconds >= 0 else { return nil }
                minimumLifetime = seconds
            }
            self = .token(AccountSelector(parsing: selector), minimumLifetime: minimumLifetime)
        default:
            return nil
        }
    }
}
