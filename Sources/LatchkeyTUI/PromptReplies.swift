import Synchronization

/// Where a sign-in running off the terminal's thread waits for the person's answer.
///
/// The interaction posts an event that puts a form on the screen and awaits `next()`; the key
/// that submits the form becomes an `Effect.answer`, which the runner hands to `deliver`.
/// Cancelling the waiting task answers `.cancel`.
public final class PromptReplies: Sendable {
    private struct State {
        var waiter: CheckedContinuation<PromptAnswer, Never>?
        var ready: [PromptAnswer] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// The next answer, waiting for it if none has come yet.
    public func next() async -> PromptAnswer {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let answer: PromptAnswer? = state.withLock { state in
                    guard !state.ready.isEmpty else {
                        state.waiter = continuation
                        return nil
                    }
                    return state.ready.removeFirst()
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            deliver(.cancel)
        }
    }

    public func deliver(_ answer: PromptAnswer) {
        let waiter: CheckedContinuation<PromptAnswer, Never>? = state.withLock { state in
            defer { state.waiter = nil }
            if state.waiter == nil { state.ready.append(answer) }
            return state.waiter
        }
        waiter?.resume(returning: answer)
    }

    /// Forgets answers nobody took (a new sign-in starts clean).
    public func reset() {
        state.withLock { $0.ready.removeAll() }
    }
}
