import CLatchkeySys
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyEssentials
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeySecondFactor
import LatchkeyTUI
import LatchkeyVault

/// The plain-terminal side of a sign-in: messages and prompts on `output`, answers from `input`.
///
/// `login` answers from stdin: passwords are read without echo from /dev/tty when stdin is a
/// terminal, else as a line from stdin (scripts and tests); pasted URLs, codes and menu choices
/// are lines on stdin. A command whose stdin belongs to another program (`token` in `$(…)`, git's
/// credential helper, kubectl's plugin) signs in again on the controlling terminal instead
/// (`atTerminal()`), and over SSH with a device code, since a browser would open on this machine.
struct CommandLineInteraction: SignInInteraction {
    /// Where answers are read from.
    var input: Int32 = STDIN_FILENO
    /// Where messages and prompts go: stderr, or the terminal itself when a command signs in on
    /// it while its stderr is not one (the AWS CLI, git and kubectl capture a helper's stderr,
    /// so the person would wait for a prompt they never see).
    var output: Int32 = STDERR_FILENO
    /// Over SSH (`$SSH_CONNECTION`), the mode a browser sign-in takes instead; `nil` keeps the
    /// provider's own (`login` signs in as the provider file, `--paste` or `--device` say).
    var remoteMode: OAuthClient.RedirectMode?

    /// An interaction on the controlling terminal, for a sign-in a command needs on its own; `nil`
    /// when there is no terminal (cron, CI, a service): nobody to sign in.
    static func atTerminal(environment: [String: String] = ProcessInfo.processInfo.environment) -> CommandLineInteraction? {
        guard let terminal = TerminalDevice.open() else { return nil }
        let remote = !(environment["SSH_CONNECTION"] ?? "").isEmpty
        return CommandLineInteraction(
            input: terminal.descriptor, output: isatty(STDERR_FILENO) == 1 ? STDERR_FILENO : terminal.descriptor,
            remoteMode: remote ? .device : nil)
    }

    /// For a sign-in the person asked for by name (`token --acr`, `--max-age`) where there is no
    /// terminal: through the browser alone, as `login` signs in without one. Nothing can be typed
    /// (answers come from /dev/null), so a sign-in that needs a prompt ends saying so.
    static func browserOnly() -> CommandLineInteraction {
        CommandLineInteraction(input: open("/dev/null", O_RDONLY | O_CLOEXEC), remoteMode: nil)
    }

    func chooseRedirectMode(for provider: OAuthProvider) async -> OAuthClient.RedirectMode? {
        guard let remoteMode, !(ProcessInfo.processInfo.environment["SSH_CONNECTION"] ?? "").isEmpty else { return .loopback }
        return remoteMode
    }

    func authorizationStarted(url: URL, provider: OAuthProvider, redirectURI: String, listeningOn: [String]) async {
        say("Signing in to \(TerminalText.sanitized(provider.displayName)) (\(provider.issuer ?? url.host ?? "")).")
        if !listeningOn.isEmpty {
            say("Waiting for the browser at \(redirectURI) (listening on \(listeningOn.joined(separator: " and "))).")
            say("If no browser opens, visit:\n\n  \(url.absoluteString)\n")
        }
    }

    func browserUnavailable(url: URL, reason: String) async {
        say("\(reason). Open this address in a browser on this machine:\n\n  \(url.absoluteString)\n")
    }

    func pasteRedirectURL(url: URL, provider: OAuthProvider, redirectURI: String) async throws -> String {
        say(
            """
            Open this address in any browser:

              \(url.absoluteString)

            After you sign in, the browser is sent to \(redirectURI.replacingOccurrences(of: provider.redirectPath, with: ""))… and shows
            an error page (nothing listens there). Copy the whole address from its address bar and paste it here.
            """)
        show("Redirect URL: ")
        guard let line = PastedLine.read(from: input), !line.isEmpty else { throw SignInError.cancelled }
        return line
    }

    func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: OAuthProvider) async {
        say(
            """
            \(TerminalText.sanitized(provider.displayName)) (client \(TerminalText.sanitized(provider.clientID))) asks you to approve a sign-in.
            Only continue if you started it. On any device, open

              \(TerminalText.sanitized(authorization.verificationURIComplete ?? authorization.verificationURI))

            and enter the code  \(TerminalText.sanitized(authorization.userCode))
            (it expires in \(authorization.expiresIn / 60) min; waiting…)
            """)
        let environment = ProcessInfo.processInfo.environment
        guard QRCode.shouldShow(environment: environment),
            let code = QRCode(text: authorization.verificationURIComplete ?? authorization.verificationURI)
        else { return }
        let lines = code.terminalLines(colored: (environment["NO_COLOR"] ?? "").isEmpty)
        say("\nOr scan this code with a phone to open the address:\n")
        draw(lines + [""])
    }

    func clientRegistrationCorrected(at provider: OAuthProvider, problem: String) async {
        say("Warning: registering Latchkey at \(TerminalText.sanitized(provider.displayName)): \(problem).")
    }

    // MARK: - Firebase

    func federatedSignInStarted(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async {
        say("First factor: signing in to \(TerminalText.sanitized(firstFactor.displayName)).")
    }

    func federatedSignInPassed(at firstFactor: OAuthProvider, for provider: FirebaseProvider) async {}

    func credentials(for provider: FirebaseProvider) async -> PasswordCredentials? {
        say("Signing in to \(TerminalText.sanitized(provider.displayName)) with email and password.")
        guard let email = prompt("Email: "), !email.isEmpty else { return nil }
        guard let password = readPassword("Password: "), !password.isEmpty else { return nil }
        return PasswordCredentials(email: email, password: Secret(password))
    }

    func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint? {
        say("This account has a second factor:")
        for (index, hint) in hints.enumerated() { say("  \(index + 1)) \(hint.summary)") }
        if hints.count == 1 { return hints[0] }
        while true {
            guard let answer = prompt("Use which one [1-\(hints.count)]: ") else { return nil }
            if let number = Int(answer), hints.indices.contains(number - 1) { return hints[number - 1] }
            say("Answer with a number from 1 to \(hints.count).")
        }
    }

    func verificationStarted(_ session: VerificationSession, notice: FirebaseAuthError?) async {
        if let notice { say("latchkey: \(notice.description); a new code was sent.") }
        switch session.hint.kind {
        case .phone: say("A code was sent by SMS to \(TerminalText.sanitized(session.hint.phoneNumber ?? "the phone")).")
        case .totp: say("Open your authenticator app for the code of \(session.hint.summary).")
        }
    }

    func enterCode(for session: VerificationSession, problem: FirebaseAuthError?) async -> CodeAnswer {
        if let problem { say("latchkey: \(problem.description)") }
        let resend = session.hint.kind == .phone ? " (r to send a new one)" : ""
        guard let answer = prompt("Code\(resend): "), !answer.isEmpty else { return .cancel }
        if answer == "r" && session.hint.kind == .phone { return .resend }
        return .code(Secret(answer))
    }

    // MARK: - Terminal

    /// A message, made inert (`TerminalText`), on its own line.
    private func say(_ text: String) { show(TerminalText.sanitizedLines(text) + "\n") }

    /// Lines Latchkey drew itself with its own escape sequences (the QR code's colours).
    private func draw(_ lines: [String]) { show(lines.joined(separator: "\n") + "\n") }

    /// `text` as it is, all of it unless `output` fails.
    private func show(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    func prompt(_ text: String) -> String? {
        show(text)
        return LineReader(descriptor: input).readLine()?.trimmingCharacters(in: .whitespaces)
    }

    func readPassword(_ text: String) -> String? {
        if isatty(input) == 1, let terminal = TerminalDevice.open() {
            defer { terminal.close() }
            return terminal.readHidden(prompt: text)
        }
        show(text)
        return LineReader(descriptor: input).readLine()
    }
}

/// Reads the pasted redirect URL from stdin with no length limit.
///
/// A terminal in canonical mode cuts a line at 4096 bytes (the kernel's line buffer), and
/// redirect URLs with large `code`s exceed that; so canonical mode is switched off for the read,
/// and comes back whatever ends it: Enter, Ctrl-C, a signal, or `--timeout`, after which the
/// command exits while this read still waits (`lk_terminal_guard` restores it at exit).
enum PastedLine {
    static func read(from input: Int32 = STDIN_FILENO) -> String? {
        var raw = termios()
        let isTerminal = isatty(input) == 1 && tcgetattr(input, &raw) == 0 && lk_terminal_guard(input) == 0
        if isTerminal {
            raw.c_lflag &= ~tcflag_t(ICANON)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            tcsetattr(input, TCSANOW, &raw)
        }
        defer { if isTerminal { lk_terminal_unguard() } }
        return LineReader(descriptor: input).readLine()?.trimmingCharacters(in: .whitespaces)
    }
}

/// A `confirm = true` account's release, asked on the terminal the command signs in on.
extension CommandLineInteraction: ReleaseApproval, ScopeApproval {
    /// Type-ahead is discarded first, so nothing typed before the question answers it; only `y`
    /// or `yes` agrees.
    func approveRelease(of account: String, to requester: String, within seconds: Int) async -> Bool? {
        await yes(to: "latchkey: release a token of \(account) to \(requester)? [y/N] (refused in \(seconds) s) ", within: seconds)
    }

    /// Shown the scopes and who asks for them, the person answers; nobody answering in a minute
    /// is a no.
    func approveScopes(_ scopes: [String], for account: String, askedBy: String) async -> Bool {
        let listed = scopes.map { TerminalText.sanitized($0, maxLength: 80) }.joined(separator: " ")
        let question =
            "latchkey: \(TerminalText.sanitized(askedBy, maxLength: 200)) asks \(TerminalText.sanitized(account, maxLength: 200)) for more scope: \(listed)\n"
            + "latchkey: sign in again asking for it? [y/N] (no in 60 s) "
        return await yes(to: question, within: 60) == true
    }

    /// Asks `question`; `true` for `y` or `yes`, `nil` when nobody answered within `seconds`.
    private func yes(to question: String, within seconds: Int) async -> Bool? {
        tcflush(input, TCIFLUSH)
        show(question)
        var waiting = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let left = deadline - ContinuousClock.now
            let ready = poll(
                &waiting, 1, Int32(max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            if ready > 0 { break }
            if ready == 0 || errno != EINTR {
                show("\n")
                return nil
            }
        }
        let answer = LineReader(descriptor: input).readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
        return answer == "y" || answer == "yes"
    }
}
