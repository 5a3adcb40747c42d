public import LatchkeyBrokerWire
import LatchkeyEssentials
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
        let request = AgentRequest(
            .token, selector: selector.description, minimumLifetime: minimumLifetime, tokens: .access, narrowing: narrowing,
            workingDirectory: PhysicalDirectory.current(), client: .current())
        return answer(request, endpoint: endpoint) { answer in
            guard let token = answer.accessToken else { return nil }
            return Array(token.exposedValue.utf8) + [UInt8(ascii: "\n")]
        }
    }

    /// `latchkey aws-credential SELECTOR …` answered by the agent, which calls STS itself (or
    /// answers from the credentials it keeps): printed as the full command prints them.
    public static func runAWSCredential(
        _ selector: AccountSelector, options: [String?], minimumLifetime: Int, endpoint: AgentSocket.Endpoint
    ) -> Outcome {
        let request = AgentRequest.awsCredential(
            selector: selector.description, options: options, minimumLifetime: minimumLifetime,
            environment: { getenv($0).map { String(cString: $0) } }, workingDirectory: PhysicalDirectory.current())
        return answer(request, endpoint: endpoint) { answer in
            guard let keys = answer.aws, let text = try? ReportJSON.text(of: AWSProcessCredential(keys)) else { return nil }
            return Array((text + "\n").utf8)
        }
    }

    /// One connection, one request: what `printed` makes of a released answer goes to stdout; the
    /// agent's own refusal is said with its exit status; anything else is the full command's.
    private static func answer(
        _ request: AgentRequest, endpoint: AgentSocket.Endpoint, printed: (AgentAnswer) -> [UInt8]?
    ) -> Outcome {
        var client: AgentClient
        do {
            client = try AgentClient(endpoint: endpoint)
        } catch {
            return endpoint.isExplicit ? .fullCommand : .noAgent
        }
        let answer: AgentAnswer
        do {
            answer = try client.exchange(request, notice: { say($0.message ?? "") })
        } catch {
            // Closed unanswered (an agent too busy, or stopping): as when no agent answers there.
            guard case .closed = error, !endpoint.isExplicit else { return .fullCommand }
            return .noAgent
        }
        if answer.ok {
            guard var output = printed(answer) else { return .fullCommand }
            defer { output.zeroize() }
            return written(output, to: STDOUT_FILENO) ? .answered(0) : .fullCommand
        }
        guard answer.signIn == nil, let status = answer.exit, status != 0 else { return .fullCommand }
        say(answer.message ?? "the agent refused")
        return .answered(status)
    }

    /// A line for the person on stderr, made inert for the terminal.
    private static func say(_ text: String) {
        _ = written(Array(("latchkey: " + TerminalText.sanitizedLines(text) + "\n").utf8), to: STDERR_FILENO)
    }

    /// A NUL-terminated C string from a buffer the kernel filled.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func written(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count
    }

}
