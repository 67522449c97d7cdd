import Foundation

extension Task where Failure == any Error {
    /// The task's value, awaited so that cancelling the *waiting* task stops the wait at once with
    /// `CancellationError`, without cancelling this task (others may still be waiting on it).
    func valueUnlessCancelled() async throws -> Success {
        let waiter = Waiter<Success>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.set(continuation) else { return }   // cancelled already: nothing to wait for
                Task<Void, Never> { waiter.resume(with: await self.result) }
            }
        } onCancel: {
            waiter.resume(with: .failure(_Concurrency.CancellationError()))
        }
    }
}

/// A continuation resumed at most once, by whichever comes first.
private final class Waiter<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `continuation` and `early` are guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, any Error>?
    private var early: Result<Value, any Error>?
    private var done = false

    /// Stores `continuation`; returns false when a result came first (and resumes it with that).
    func set(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        lock.lock()
        if let early {
            lock.unlock()
            continuation.resume(with: early)
            return false
        }
        self.continuation = continuation
        lock.unlock()
        return true
    }

    func resume(with result: Result<Value, any Error>) {
        lock.lock()
        guard !done else {
            lock.unlock()
            return
        }
        done = true
        guard let continuation else {
            early = result
            lock.unlock()
            return
        }
        self.continuation = nil
        lock.unlock()
        continuation.resume(with: result)
    }
}
