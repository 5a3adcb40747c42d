public import LatchkeyCore

/// The screen's side of a firebase sign-in: the forms are drawn by the loop, the answers come
/// back through `replies` (the way `ScreenInteraction` gets a pasted URL).
public struct ScreenSecondFactor: SecondFactorInteraction {
    let inbox: Inbox
    let replies: PromptReplies

    public init(inbox: Inbox, replies: PromptReplies) {
        self.inbox = inbox
        self.replies = replies
    }

    public func firstFactor(for provider: Provider) async throws -> FirstFactor {
        guard case .password = provider.firebase?.firstFactor else { throw ScreenSignInError.federatedFirstFactor(provider: provider.name) }
        post(.credentialsNeeded)
        guard case .credentials(let email, let password) = await replies.next() else { throw SecondFactorError.cancelled }
        return .password(email: email, password: password)
    }

    public func chooseHint(_ hints: [SecondFactorHint]) async -> SecondFactorHint? {
        post(.chooseHint(hints))
        guard case .hint(let id) = await replies.next() else { return nil }
        return hints.first { $0.id == id }
    }

    public func verificationStarted(_ session: VerificationSession, notice: SecondFactorError?) async {
        post(.codeSent(session.hint, notice: notice.map { "\($0.description); a new code was sent." }))
    }

    public func enterCode(for session: VerificationSession, problem: SecondFactorError?) async -> CodeAnswer {
        post(.codeNeeded(session.hint, problem: problem.map(SecondFactorProgress.Problem.init), canResend: session.hint.kind == .phone))
        guard case .code(let answer) = await replies.next() else { return .cancel }
        return answer
    }

    /// Asks for the enrollment code sent to `maskedNumber` (`AccountService.enrollPhone`).
    func enrollmentCode(maskedNumber: String, displayName: String?) async -> Secret? {
        let hint = SecondFactorHint(id: "", kind: .phone, displayName: displayName, phoneNumber: maskedNumber)
        post(.codeSent(hint, notice: nil))
        post(.codeNeeded(hint, problem: nil, canResend: false))
        guard case .code(.code(let code)) = await replies.next() else { return nil }
        return code
    }

    private func post(_ progress: SecondFactorProgress) {
        guard !Task.isCancelled else { return }
        inbox.post(.secondFactor(progress))
    }
}

/// Sign-in steps the screen leaves to the command line.
public enum ScreenSignInError: LatchkeyError, Equatable {
    case federatedFirstFactor(provider: String)

    public var category: FailureCategory { .unavailable }

    public var description: String {
        switch self {
        case .federatedFirstFactor(let provider):
            return "\(provider) signs in first through another provider, which the screen cannot do yet; run `latchkey login \(provider)`"
        }
    }
}
