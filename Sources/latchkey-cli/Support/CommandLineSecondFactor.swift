import Foundation
import LatchkeyCore

/// The plain-terminal side of a firebase sign-in: prompts on stderr, answers from stdin.
///
/// Passwords are read without echo from /dev/tty when stdin is a terminal, else as a line from
/// stdin (scripts and tests). Codes and menu choices are lines on stdin.
struct CommandLineSecondFactor: SecondFactorInteraction {
    /// Signs in to the OpenID provider named by `first_factor = "provider:NAME"`
    /// (`AccountService.federatedFirstFactor`).
    let federatedSignIn: @Sendable (Provider) async throws -> FirstFactor
    let catalog: ProviderCatalog

    func firstFactor(for provider: Provider) async throws -> FirstFactor {
        guard let settings = provider.firebase else { throw SecondFactorError.cancelled }
        switch settings.firstFactor {
        case .password:
            Output.info("Signing in to \(TerminalText.sanitized(provider.displayName)) with email and password.")
            guard let email = Self.prompt("Email: "), !email.isEmpty else { throw SecondFactorError.cancelled }
            guard let password = Self.readPassword("Password: "), !password.isEmpty else { throw SecondFactorError.cancelled }
            return .password(email: email, password: Secret(password))
        case .provider(let name):
            let other = try catalog.provider(named: name)
            Output.info("First factor: signing in to \(TerminalText.sanitized(other.displayName)).")
            return try await federatedSignIn(other)
        }
    }

    func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint? {
        Output.info("This account has a second factor:")
        for (index, hint) in hints.enumerated() { Output.info("  \(index + 1)) \(hint.summary)") }
        if hints.count == 1 { return hints[0] }
        while true {
            guard let answer = Self.prompt("Use which one [1-\(hints.count)]: ") else { return nil }
            if let number = Int(answer), hints.indices.contains(number - 1) { return hints[number - 1] }
            Output.info("Answer with a number from 1 to \(hints.count).")
        }
    }

    func verificationStarted(_ session: VerificationSession, notice: SecondFactorError?) async {
        if let notice { Output.info("latchkey: \(notice.description); a new code was sent.") }
        switch session.hint.kind {
        case .phone: Output.info("A code was sent by SMS to \(TerminalText.sanitized(session.hint.phoneNumber ?? "the phone")).")
        case .totp: Output.info("Open your authenticator app for the code of \(session.hint.summary).")
        }
    }

    func enterCode(for session: VerificationSession, problem: SecondFactorError?) async -> CodeAnswer {
        if let problem { Output.info("latchkey: \(problem.description)") }
        let resend = session.hint.kind == .phone ? " (r to send a new one)" : ""
        guard let answer = Self.prompt("Code\(resend): "), !answer.isEmpty else { return .cancel }
        if answer == "r" && session.hint.kind == .phone { return .resend }
        return .code(Secret(answer))
    }

    // MARK: - Terminal

    static func prompt(_ text: String) -> String? {
        FileHandle.standardError.write(Data(text.utf8))
        return LineReader(descriptor: STDIN_FILENO).readLine()?.trimmingCharacters(in: .whitespaces)
    }

    static func readPassword(_ text: String) -> String? {
        if isatty(STDIN_FILENO) == 1, let terminal = TerminalDevice.open() {
            defer { terminal.close() }
            return terminal.readHidden(prompt: text)
        }
        FileHandle.standardError.write(Data(text.utf8))
        return LineReader(descriptor: STDIN_FILENO).readLine()
    }
}
