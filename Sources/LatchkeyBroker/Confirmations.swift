import Foundation
import LatchkeyBrokerWire
import LatchkeyVault
import Synchronization

/// Releases waiting for a person (`confirm = true`), and who is told about them.
///
/// Each waiting release has a number, which `latchkey approve N` / `latchkey deny N`, the open
/// screen and the agent's own terminal answer; the first answer counts. A release nobody answers
/// is refused at its deadline, and one whose client went away is dropped.
final class Confirmations: Sendable {
    private struct Waiting {
        var request: WaitingRelease
        var continuation: CheckedContinuation<ReleaseDecision.Answer, Never>
    }

    private let state = Mutex<(next: Int, waiting: [Int: Waiting], watchers: [Int: AgentConnection])>((1, [:], [:]))
    /// Told of every new request (the agent's terminal prompt, a desktop notification).
    private let announce: @Sendable (WaitingRelease) -> Void

    init(announce: @escaping @Sendable (WaitingRelease) -> Void) {
        self.announce = announce
    }

    /// Waits for a person's answer about releasing `account` to `requester`, at most `timeout`.
    /// `started` gets the request before anyone is told, for the client's "waiting" line.
    func ask(
        account: String, requester: Requester, timeout: Duration, connection: AgentConnection,
        started: @Sendable (WaitingRelease) -> Void
    ) async -> ReleaseDecision.Answer {
        let expiresAt = Int(Date().timeIntervalSince1970) + Int(timeout.components.seconds)
        return await withCheckedContinuation { continuation in
            let (request, watchers) = state.withLock { state in
                let request = WaitingRelease(
                    id: state.next, account: account, requester: requester.description, forwarded: requester.forwarded, expiresAt: expiresAt
                )
                state.next += 1
                state.waiting[request.id] = Waiting(request: request, continuation: continuation)
                return (request, Array(state.watchers.values))
            }
            started(request)
            for watcher in watchers { watcher.send(.confirmation(request), final: false) }
            announce(request)
            connection.onClose { [weak self] in self?.finish(request.id, .abandoned) }
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                self?.finish(request.id, .timedOut)
            }
        }
    }

    /// A person's answer; `false` when no such request waits.
    func answer(_ id: Int, approve: Bool) -> Bool {
        finish(id, approve ? .approved : .denied)
    }

    /// Every request still waiting, oldest first.
    var waiting: [WaitingRelease] {
        state.withLock { $0.waiting.values.map(\.request).sorted { $0.id < $1.id } }
    }

    /// Sends `connection` (the screen) every waiting request now and every new one later.
    func watch(_ connection: AgentConnection) {
        let pending = state.withLock { state in
            state.watchers[connection.id] = connection
            return state.waiting.values.map(\.request).sorted { $0.id < $1.id }
        }
        for request in pending { connection.send(.confirmation(request), final: false) }
        connection.onClose { [weak self] in
            _ = self?.state.withLock { $0.watchers.removeValue(forKey: connection.id) }
        }
    }

    @discardableResult
    private func finish(_ id: Int, _ decision: ReleaseDecision.Answer) -> Bool {
        let (waiting, watchers) = state.withLock { state in (state.waiting.removeValue(forKey: id), Array(state.watchers.values)) }
        guard let waiting else { return false }
        waiting.continuation.resume(returning: decision)
        for watcher in watchers { watcher.send(.closed(id), final: false) }
        return true
    }
}
