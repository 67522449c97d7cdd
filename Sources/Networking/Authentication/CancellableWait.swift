import Foundation

/// A result that many tasks wait for, set once: the waiters of a token refresh. Each waiter costs one
/// continuation (no task of its own), and cancelling a *waiting* task stops its wait at once with
/// `CancellationError`, without touching the work whose result it is (others may still be waiting).
final class SharedResult<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every `var` is guarded by `lock`.
    private let lock = NSLock()
    private var result: Result<Value, any Error>?
    private var waiters: [Int: CheckedContinuation<Value, any Error>] = [:]
    /// Waiters cancelled before their continuation was stored.
    private var cancelledEarly: Set<Int> = []
    private var nextWaiter = 0

    /// The result, once set; throws `CancellationError` if the waiting task is cancelled first.
    func value() async throws -> Value {
        let waiter: Int
        switch enter() {
        case .done(let result): return try result.get()
        case .waiting(let id): waiter = id
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in store(continuation, for: waiter) }
        } onCancel: {
            cancel(waiter)
        }
    }

    /// Sets the result (the first one wins) and resumes every waiter with it.
    func finish(_ result: Result<Value, any Error>) {
        lock.lock()
        guard self.result == nil else {
            lock.unlock()
            return
        }
        self.result = result
        let waiting = waiters
        waiters = [:]
        cancelledEarly = []
        lock.unlock()
        for continuation in waiting.values { continuation.resume(with: result) }
    }

    private enum Entry {
        case done(Result<Value, any Error>)
        case waiting(Int)
    }

    private func enter() -> Entry {
        lock.lock()
        defer { lock.unlock() }
        if let result { return .done(result) }
        nextWaiter += 1
        return .waiting(nextWaiter)
    }

    private func store(_ continuation: CheckedContinuation<Value, any Error>, for waiter: Int) {
        lock.lock()
        if cancelledEarly.remove(waiter) != nil {
            lock.unlock()
            continuation.resume(throwing: _Concurrency.CancellationError())
        } else if let result {
            lock.unlock()
            continuation.resume(with: result)
        } else {
            waiters[waiter] = continuation
            lock.unlock()
        }
    }

    private func cancel(_ waiter: Int) {
        lock.lock()
        if let continuation = waiters.removeValue(forKey: waiter) {
            lock.unlock()
            continuation.resume(throwing: _Concurrency.CancellationError())
            return
        }
        if result == nil { cancelledEarly.insert(waiter) }   // its continuation is not stored yet
        lock.unlock()
    }
}

/// A running token refresh of an ``AuthInterceptor``: its task, and its result shared by every request
/// waiting for it.
struct RefreshTask: Sendable {
    let task: Task<Credential, any Error>
    let shared: SharedResult<Credential>

    /// Cancels the refresh (its waiters get what it then returns or throws).
    func cancel() { task.cancel() }

    /// The refreshed credential, awaited so that cancelling the waiting task stops the wait at once with
    /// `CancellationError`, without cancelling the refresh.
    func valueUnlessCancelled() async throws -> Credential {
        try await shared.value()
    }
}
