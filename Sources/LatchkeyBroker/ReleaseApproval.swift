public import Foundation
public import LatchkeyVault
import LatchkeyKeystore
public import LatchkeyOAuth
public import LatchkeyAccounts

/// A person who can agree to a token of a `confirm = true` account going to another program, when
/// a command on this machine hands it on without the agent (which asks in its own ways). The
/// command line's terminal interaction is one.
public protocol ReleaseApproval: Sendable {
    /// Whether the person agrees that `requester` gets a token of `account`; `nil` when nobody
    /// answered within `seconds`.
    func approveRelease(of account: String, to requester: String, within seconds: Int) async -> Bool?
}

extension AccountService {
    /// `usableRecord`, released only as `confirm` allows: an account marked `confirm = true` is
    /// handed on only once the person at `interaction` agrees (`ReleasePolicy`).
    public func validRecord(
        for selector: AccountSelector, minimumLifetime: TimeInterval, signingInWith interaction: (any SignInInteraction)?,
        stepUp: StepUp = StepUp(), timeout: Duration = .seconds(300)
    ) async throws -> AccountRecord {
        let record = try await usableRecord(
            for: selector, minimumLifetime: minimumLifetime, signingInWith: interaction, stepUp: stepUp, timeout: timeout)
        try await approveRelease(of: record, asking: interaction as? any ReleaseApproval)
        return record
    }

    /// Asks `approval` before `record`'s token goes to the program that ran this one, when the
    /// policy says so (`ReleaseDecision` at the command's door); throws the refusal otherwise.
    /// The answer is logged as the agent logs its releases (`latchkey agent log`); a log that
    /// cannot be written is said, never fatal.
    func approveRelease(of record: AccountRecord, asking approval: (any ReleaseApproval)?) async throws(ReleaseRefusal) {
        guard let releasePolicy else { return }
        let decision = ReleaseDecision(
            account: "\(record.provider):\(record.label)", provider: record.provider, door: .command, forward: false,
            confirm: releasePolicy.needsApproval(record), confirmSeconds: releasePolicy.timeout)
        let requester = Requester.parentOfThisProcess().description
        var actions = decision.chosen()[...]
        while let action = actions.popFirst() {
            switch action {
            case .log(let outcome, let reason):
                releasePolicy.record(
                    ReleaseLog.Entry(
                        time: engine.now(), account: decision.account, requester: requester, forwarded: false, outcome: outcome,
                        reason: reason))
            case .ask(let seconds):
                let answer = await approval?.approveRelease(of: decision.account, to: requester, within: seconds)
                actions = decision.answered(approval == nil ? .nobodyToAsk : answer.map { $0 ? .approved : .denied } ?? .timedOut)[...]
            case .refuse(let refusal):
                throw refusal
            case .handOver:
                return
            case .fetchToken, .fireReleaseHook:
                // Not at this door: the command fetched the token before it asked, and hooks hear
                // of the agent's releases.
                continue
            }
        }
    }
}
