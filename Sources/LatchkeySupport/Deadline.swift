import Synchronization

/// Runs `operation` for at most `duration` of `clock`'s time: its result, or `expired` when the
/// time ran out first.
///
/// The first of the two to finish answers and the other is cancelled, without waiting for the
/// operation to notice: it may be blocked where cancellation cannot reach (a read from the
/// terminal), and a deadline that waits for it would be no deadline.
package func withDeadline<Value: Sendable>(
    _ duration: Duration, clock: any WallClock, expired: any Error,
    _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let answer = FirstAnswer<Value>()
    return try await withCheckedThrowingContinuation { continuation in
        answer.start(continuation)
        let work = Task {
            do {
                answer.give(.success(try await operation()))
            } catch {
                answer.give(.failure(error))
            }
        }
        let timer = Task {
            try? await clock.sleep(for: duration)
            guard !Task.isCancelled else { return }
            answer.give(.failure(expired))
            work.cancel()
        }
        answer.onFinish { timer.cancel() }
    }
}

/// Resumes a continuation with whichever answer comes first, once.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Value, any Error>?, finish: (@Sendable () -> Void)?, done: Bool)>(
        (nil, nil, false))

    func start(_ continuation: CheckedContinuation<Value, any Error>) { state.withLock { $0.continuation = continuation } }

    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let alreadyDone = state.withLock { state in
            state.finish = action
            return state.done
        }
        if alreadyDone { action() }
    }

    func give(_ result: Result<Value, any Error>) {
        let (continuation, finish) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, (@Sendable () -> Void)?) in
            guard !state.done else { return (nil, nil) }
            state.done = true
            defer { state.continuation = nil }
            return (state.continuation, state.finish)
        }
        continuation?.resume(with: result)
        finish?()
    }
}
