/// The commands the launcher may answer without `latchkey-cli`, read from its command line once,
/// for both of its answers (the token copy, then the vault).
///
/// Only these exact shapes: anything else (another option, an option twice spelled otherwise, a
/// value the full command would refuse) is not a `LauncherRequest`, and the full command answers
/// with its own message.
public import LatchkeyEssentials
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
    /// `aws-credential SELECTOR [--role-arn A] [--duration N] [--session-name S] [--sts-endpoint U]
    /// [--min-ttl N]`: `options` as given, which with the environment name the answer the full
    /// command kept (`TokenCopy.awsAnswerKeyDescription`); `minimumLifetime` goes to the agent,
    /// when the agent answers.
    case awsCredential(AccountSelector, options: AWSRoleOptions, minimumLifetime: Int)

    public init?(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        switch rest.popFirst() {
        case "status" where rest.elementsEqual(["--json"]):
            self = .statusJSON
        case "mcp" where rest.count == 2 && rest.first == "headers":
            guard let selector = rest.last, !selector.hasPrefix("-"), !selector.isEmpty else { return nil }
            self = .mcpHeaders(AccountSelector(parsing: selector))
        case "token":
            guard let selector = rest.popFirst(), !selector.hasPrefix("-"), !selector.isEmpty,
                let given = Self.options(["--min-ttl", "--resource", "--scope"], in: &rest),
                let seconds = Self.minimumLifetime(given["--min-ttl"])
            else { return nil }
            let (resource, scope) = (given["--resource"], given["--scope"])
            var narrowing: TokenNarrowing?
            if resource != nil || scope != nil {
                let scopes = scope.map(TokenNarrowing.scopes) ?? []
                guard scope == nil || !scopes.isEmpty else { return nil }
                narrowing = TokenNarrowing(resource: resource, scopes: scopes)
            }
            self = .token(AccountSelector(parsing: selector), minimumLifetime: seconds, narrowing: narrowing)
        case "aws-credential":
            let names = ["--role-arn", "--duration", "--session-name", "--sts-endpoint"]
            guard let selector = rest.popFirst(), !selector.hasPrefix("-"), !selector.isEmpty,
                let given = Self.options(names + ["--min-ttl"], in: &rest), let seconds = Self.minimumLifetime(given["--min-ttl"])
            else { return nil }
            // The full command reads --duration as an `Int`, as the options hold it.
            var duration: Int?
            if let raw = given["--duration"] {
                guard let seconds = Int(raw) else { return nil }
                duration = seconds
            }
            let options = AWSRoleOptions(
                roleARN: given["--role-arn"], duration: duration, sessionName: given["--session-name"], stsEndpoint: given["--sts-endpoint"]
            )
            self = .awsCredential(AccountSelector(parsing: selector), options: options, minimumLifetime: seconds)
        default:
            return nil
        }
    }

    /// The options `names` in `arguments`, each at most once (the full command says what it makes
    /// of a repeat), as `--name value` or `--name=value`; `nil` for anything else.
    private static func options(_ names: [String], in arguments: inout ArraySlice<String>) -> [String: String]? {
        var given: [String: String] = [:]
        while let argument = arguments.popFirst() {
            let name: String
            let value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
                value = arguments.popFirst()
            }
            guard names.contains(name), given[name] == nil, let value else { return nil }
            given[name] = value
        }
        return given
    }

    /// `--min-ttl` as the full command reads it (an `Int`, not negative; 60 when not given), or
    /// `nil` for a value it would refuse, which is not answered here either.
    private static func minimumLifetime(_ given: String?) -> Int? {
        guard let given else { return 60 }
        guard let seconds = Int(given), seconds >= 0 else { return nil }
        return seconds
    }
}
