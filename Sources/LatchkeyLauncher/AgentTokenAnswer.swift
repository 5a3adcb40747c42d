public import LatchkeyBrokerWire
public import LatchkeyEssentials
public import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey token SELECTOR [--min-ttl N]` (and `aws-credential`) answered by `latchkey agent`,
/// for the launcher: one connection, one request, the token printed as the agent released it.
///
/// Only a released token and the agent's own refusal (its message and exit status) are answered
/// here; anything else (an account only a sign-in can help, an agent that broke off) goes to the
/// full command, which asks again and says what went wrong.
public enum AgentTokenAnswer {
    public enum Outcome: Equatable {
        /// Printed; the exit status.
        case answered(Int32)
        /// The full command must answer.
        case fullCommand
        /// The default socket has no agent, or one not to be trusted: answer as without one (the
        /// full command, if it comes to that, says why it passed the socket over).
        case noAgent
    }

    public static func run(
        _ selector: AccountSelector, narrowing: TokenNarrowing? = nil, minimumLifetime: Int, endpoint: AgentSocket.Endpoint
    ) -> Outcome {
        let request = TokenRequest(
            selector: selector.description, minimumLifetime: minimumLifetime, tokens: .access, narrowing: narrowing,
            workingDirectory: PhysicalDirectory.current())
        return answer(.token(request), endpoint: endpoint) { answer in
            guard case .token(let release) = answer, let token = release.accessToken else { return nil }
            return Array(token.exposedValue.utf8) + [UInt8(ascii: "\n")]
        }
    }

    /// `latchkey aws-credential SELECTOR …` answered by the agent, which calls STS itself (or
    /// answers from the credentials it keeps): printed as the full command prints them.
    public static func runAWSCredential(
        _ selector: AccountSelector, options: AWSRoleOptions, minimumLifetime: Int, endpoint: AgentSocket.Endpoint
    ) -> Outcome {
        let request = AWSCredentialRequest(
            selector: selector.description, options: options, minimumLifetime: minimumLifetime,
            environment: AWSRoleOptions.environment { getenv($0).map { String(cString: $0) } },
            workingDirectory: PhysicalDirectory.current())
        return answer(.awsCredential(request), endpoint: endpoint) { answer in
            guard case .awsCredential(let release) = answer, let text = try? ReportJSON.text(of: AWSProcessCredential(release)) else {
                return nil
            }
            return Array((text + "\n").utf8)
        }
    }

    /// One connection, one request: what `printed` makes of a release goes to stdout; the agent's
    /// own refusal is said with its exit status; anything else is the full command's.
    private static func answer(_ request: BrokerRequest, endpoint: AgentSocket.Endpoint, printed: (BrokerAnswer) -> [UInt8]?) -> Outcome {
        var client: AgentClient
        do {
            client = try AgentClient(endpoint: endpoint)
        } catch {
            return endpoint.isExplicit ? .fullCommand : .noAgent
        }
        let answer: BrokerAnswer
        do {
            answer = try client.exchange(request, notice: { say($0) })
        } catch {
            // Closed unanswered (an agent too busy, or stopping): as when no agent answers there.
            guard case .closed = error, !endpoint.isExplicit else { return .fullCommand }
            return .noAgent
        }
        if case .refused(let refusal) = answer {
            // Only a sign-in can help: the full command may sign in here, or says where.
            guard refusal.signIn == nil else { return .fullCommand }
            say(refusal.message)
            return .answered(refusal.category.exitStatus)
        }
        guard var output = printed(answer) else { return .fullCommand }
        defer { output.zeroize() }
        return written(output, to: STDOUT_FILENO) ? .answered(0) : .fullCommand
    }

    /// A line for the person on stderr, made inert for the terminal.
    private static func say(_ text: String) {
        _ = written(Array(("latchkey: " + TerminalText.sanitizedLines(text) + "\n").utf8), to: STDERR_FILENO)
    }

    private static func written(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count
    }

}
