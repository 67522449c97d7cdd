import Foundation

extension Task where Failure == any Error {
    /// The task's value, awaited so that cancelling the *waiting* task stops the wait at once with
    /// `CancellationError`, without cancelling this task (others may still be waiting on it).
    func valueUnlessCancelled() async throws -> Success {
        let waiter = Waiter<Success>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.set(continuation)
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

    func set(_ continuation: CheckedContinuation<Value, any Error>) {
        lock.lock()
        if let early {
            lock.unlock()
            continuation.resume(with: early)
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    func resume(with result: Result<Value, any Error>) {
        lock.lock()
        guard !done else { lock.unlock(); return }
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
