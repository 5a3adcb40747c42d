import Synchronization

/// A first-come, first-served lock for tasks: waiting suspends the task instead of a thread.
package final class AsyncLock: Sendable {
    private struct State {
        var locked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// One lock per file path, shared by every keystore object of this process.
    package static func forPath(_ path: String) -> AsyncLock {
        registry.withLock { locks in
            if let lock = locks[path] { return lock }
            let lock = AsyncLock()
            locks[path] = lock
            return lock
        }
    }

    private static let registry = Mutex<[String: AsyncLock]>([:])

    package func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if state.locked {
                    state.waiters.append(continuation)
                    return false
                }
                state.locked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the lock to the next waiter, or frees it.
    package func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.locked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
