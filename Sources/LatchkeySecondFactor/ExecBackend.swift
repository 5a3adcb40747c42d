public import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// A second-factor backend run by an external program (`mfa_backend = "exec:/path"`).
///
/// Each request starts the program once, writes one JSON line to its stdin, closes it, and reads
/// one JSON line from its stdout; state between requests travels in the opaque `pending` and
/// `session` strings, as with Firebase. Secrets go through the pipe only, never argv or the
/// environment. The wire format is latchkey-mfa-plugin(7).
public struct ExecBackend: FirebaseAuthBackend {
    public let path: String
    /// The provider's name, passed in every request so one program can serve several providers.
    public let provider: String
    public var timeout: TimeInterval = 30
    /// Answers larger than this are refused (a token response is a few KiB).
    static let responseLimit = 1 << 20
    static let protocolVersion = 1

    public init(path: String, provider: String) {
        self.path = path
        self.provider = provider
    }

    // MARK: - Requests

    public func signIn(_ firstFactor: FirstFactor) async throws(FirebaseAuthError) -> FirstFactorOutcome {
        var request = PluginRequest("first_factor", provider: provider)
        switch firstFactor {
        case .password(let email, let password):
            request.method = "password"
            request.email = email
            request.password = password.exposedValue
        case .federated(let providerID, let idToken):
            request.method = "federated"
            request.providerID = providerID
            request.idToken = idToken.exposedValue
        }
        return try firstFactorOutcome(try await exchange(request))
    }

    public func startSignIn(hint: SecondFactorHint, pending: PendingCredential) async throws(FirebaseAuthError) -> VerificationSession {
        var request = PluginRequest("start", provider: provider)
        request.pending = pending.value.exposedValue
        request.hint = PluginRequest.Hint(hint)
        let answer = try await exchange(request)
        guard answer.type == "session" else { throw protocolError("expected an answer of type session") }
        return VerificationSession(sessionInfo: answer.session.map(Secret.init), hint: hint)
    }

    public func finalizeSignIn(session: VerificationSession, code: Secret, pending: PendingCredential) async throws(FirebaseAuthError)
        -> SignInTokens
    {
        var request = PluginRequest("finalize", provider: provider)
        request.pending = pending.value.exposedValue
        request.hint = PluginRequest.Hint(session.hint)
        request.code = code.exposedValue
        request.session = session.sessionInfo?.exposedValue
        return try tokens(try await exchange(request))
    }

    public func startPhoneEnrollment(phoneNumber: String, idToken: Secret) async throws(FirebaseAuthError) -> Secret {
        var request = PluginRequest("enroll_start", provider: provider)
        request.idToken = idToken.exposedValue
        request.phoneNumber = phoneNumber
        let answer = try await exchange(request)
        guard answer.type == "session", let session = answer.session else {
            throw protocolError("expected an answer of type session with a \"session\" string")
        }
        return Secret(session)
    }

    public func finalizePhoneEnrollment(sessionInfo: Secret, code: Secret, displayName: String?, idToken: Secret)
        async throws(FirebaseAuthError) -> SignInTokens
    {
        var request = PluginRequest("enroll_finalize", provider: provider)
        request.idToken = idToken.exposedValue
        request.session = sessionInfo.exposedValue
        request.code = code.exposedValue
        request.displayName = displayName
        return try tokens(try await exchange(request))
    }

    public func refresh(_ refreshToken: Secret) async throws(FirebaseAuthError) -> SignInTokens {
        var request = PluginRequest("refresh", provider: provider)
        request.refreshToken = refreshToken.exposedValue
        return try tokens(try await exchange(request))
    }

    // MARK: - Answers

    /// A `first_factor` answer: tokens, or the hints of the second factors to choose from.
    func firstFactorOutcome(_ answer: PluginAnswer) throws(FirebaseAuthError) -> FirstFactorOutcome {
        switch answer.type {
        case "tokens":
            return .signedIn(try tokens(answer))
        case "hints":
            guard let pending = answer.pending, let list = answer.hints else {
                throw protocolError("a hints answer needs \"pending\" and a \"hints\" array")
            }
            let hints = try list.map(hint)
            return .secondFactorRequired(hints: hints, pending: PendingCredential(Secret(pending)))
        default:
            throw protocolError("expected an answer of type tokens, hints or error")
        }
    }

    /// A `tokens` answer: the ID token, and the account when the plugin reports it.
    func tokens(_ answer: PluginAnswer) throws(FirebaseAuthError) -> SignInTokens {
        guard answer.type == "tokens", let idToken = answer.idToken, !idToken.isEmpty else {
            throw protocolError("expected an answer of type tokens with an \"id_token\" string")
        }
        var account: ReportedAccount?
        if let reported = answer.account {
            guard let issuer = reported.issuer, let subject = reported.subject, !subject.isEmpty else {
                throw protocolError("\"account\" needs \"issuer\" and \"subject\" strings")
            }
            account = ReportedAccount(
                issuer: issuer, subject: subject, displayName: reported.displayName, secondFactor: answer.secondFactor)
        }
        return SignInTokens(
            idToken: Secret(idToken), refreshToken: answer.refreshToken.map(Secret.init), expiresIn: answer.expiresIn,
            reportedAccount: account)
    }

    /// One entry of a `hints` answer.
    func hint(_ answer: PluginAnswer.Hint) throws(FirebaseAuthError) -> SecondFactorHint {
        guard let id = answer.id, let kindName = answer.kind, let kind = SecondFactorHint.Kind(rawValue: kindName)
        else { throw protocolError("every hint needs an \"id\" and a \"kind\" of phone or totp") }
        // A plugin may hand over a full number: SecondFactorHint masks it.
        return SecondFactorHint(id: id, kind: kind, displayName: answer.displayName, phoneNumber: answer.phoneNumber)
    }

    /// The typed error for a plugin's `{"type": "error", "code": …}`.
    static func error(code: String, message: String) -> FirebaseAuthError {
        switch code {
        case "wrong_code": return .wrongCode
        case "code_expired": return .codeExpired(code: "code_expired")
        case "too_many_attempts": return .tooManyAttempts
        case "quota_exceeded": return .quotaExceeded
        case "restart": return .pendingCredentialInvalid(code: "restart")
        case "invalid_credentials": return .invalidCredentials(code: "invalid_credentials")
        case "user_disabled": return .userDisabled
        case "unverified_email": return .unverifiedEmail
        case "session_ended": return .sessionEnded(code: "session_ended")
        default: return .server(backend: "the MFA plugin", code: code, message: message)
        }
    }

    private func protocolError(_ reason: String) -> FirebaseAuthError {
        .plugin(path: path, reason: "broke the protocol: \(reason) (see latchkey-mfa-plugin(7))")
    }

    // MARK: - Running the program

    /// One request, one answer; a plugin's error answer is thrown as its typed error.
    private func exchange(_ request: PluginRequest) async throws(FirebaseAuthError) -> PluginAnswer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let line = try? encoder.encode(request) else {
            throw protocolError("the request could not be encoded")
        }
        return try answer(from: try await run(input: Array(line) + [UInt8(ascii: "\n")]))
    }

    /// The plugin's answer in `output` (its first line); an `error` answer is thrown as its typed error.
    func answer(from output: [UInt8]) throws(FirebaseAuthError) -> PluginAnswer {
        guard let firstLine = output.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).first,
            let answer = try? JSONDecoder().decode(PluginAnswer.self, from: Data(firstLine))
        else { throw protocolError("the answer is not one line holding a JSON object") }
        if answer.type == "error" {
            throw Self.error(code: answer.code ?? "unknown", message: answer.message ?? "")
        }
        return answer
    }

    private func run(input: [UInt8]) async throws(FirebaseAuthError) -> [UInt8] {
        let program = try checkProgram()
        let timeout = self.timeout
        let result: Result<[UInt8], FirebaseAuthError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Self.runBlocking(path: program, input: input, timeout: timeout))
            }
        }
        return try result.get()
    }

    /// The program's real path, once `TrustedProgram` accepts it: a regular executable file that
    /// only this user or root can change, reached through directories and links only they can
    /// change (or sticky directories such as /tmp, on the way but not holding it: there others could
    /// add a library beside it that it loads). Anyone else who could write one of them could
    /// run code as this user with the account's first factor in hand. The real path is what runs:
    /// every directory on it passed the check, so nobody else can change what it names.
    func checkProgram() throws(FirebaseAuthError) -> String {
        do {
            return try TrustedProgram.open(path).path
        } catch {
            switch error {
            case .missing: throw .plugin(path: path, reason: "does not exist")
            case .notExecutable, .notRegularFile: throw .plugin(path: path, reason: "is not an executable file")
            case .anotherUsers: throw .plugin(path: path, reason: "\(error); install the plugin as your own or root's")
            case .writableByOthers(_, let mode) where mode & S_ISVTX != 0:
                throw .plugin(path: path, reason: "\(error); move the plugin to a directory only you or root can write")
            case .writableByOthers(let entry, _): throw .plugin(path: path, reason: "\(error); run chmod go-w \(entry)")
            case .unreadable, .tooManyLinks: throw .plugin(path: path, reason: error.description)
            }
        }
    }

    private static func runBlocking(path: String, input: [UInt8], timeout: TimeInterval) -> Result<[UInt8], FirebaseAuthError> {
        let outcome: ChildProcess.Outcome
        do {
            outcome = try ChildProcess.run(
                path: path, environment: ProcessInfo.processInfo.environment, input: input, timeout: timeout,
                outputLimit: responseLimit, stopAtNewline: true)
        } catch {
            return .failure(.plugin(path: path, reason: "cannot be started: \(TerminalText.sanitized(error.description, maxLength: 200))"))
        }
        let said = TerminalText.sanitized(String(decoding: outcome.errorOutput, as: UTF8.self), maxLength: 300)
        let detail = said.isEmpty ? "" : " (it said: \(said))"
        if outcome.tooLarge { return .failure(.plugin(path: path, reason: "answered with more than \(responseLimit / 1024) KiB")) }
        if outcome.timedOut {
            return .failure(.plugin(path: path, reason: "did not answer within \(Int(timeout)) s and was stopped\(detail)"))
        }
        if outcome.output.isEmpty {
            let how = outcome.status.map { "exited with status \($0)" } ?? "was killed by a signal"
            return .failure(.plugin(path: path, reason: "\(how) without answering\(detail)"))
        }
        return .success(outcome.output)
    }
}
