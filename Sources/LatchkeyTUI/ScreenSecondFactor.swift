public import LatchkeyCore

/// The screen's side of a firebase sign-in: the forms are drawn by the loop, the answers come
/// back through `replies` (the way `ScreenInteraction` gets a pasted URL).
public struct ScreenSecondFactor: SecondFactorInteraction {
    /// Runs the sign-in at the OpenID provider named by `first_factor = "provider:NAME"` on the
    /// browser, paste or device screen (`AccountService.federatedFirstFactor` with a `ScreenInteraction`).
    public typealias FederatedSignIn = @Sendable (_ providerName: String) async throws -> FirstFactor

    let inbox: Inbox
    let replies: PromptReplies
    let federatedSignIn: FederatedSignIn

    public init(inbox: Inbox, replies: PromptReplies, federatedSignIn: @escaping FederatedSignIn) {
        self.inbox = inbox
        self.replies = replies
        self.federatedSignIn = federatedSignIn
    }

    public func firstFactor(for provider: Provider) async throws -> FirstFactor {
        guard let settings = provider.firebase else { throw SecondFactorError.cancelled }
        switch settings.firstFactor {
        case .password:
            post(.credentialsNeeded)
            guard case .credentials(let email, let password) = await replies.next() else { throw SecondFactorError.cancelled }
            return .password(email: email, password: password)
        case .provider(let name):
            post(.firstFactorSignIn(provider: name))
            let factor = try await federatedSignIn(name)
            post(.firstFactorPassed(provider: name))
            return factor
        }
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
