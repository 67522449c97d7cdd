import Foundation

/// A wait that is resolved once, by whichever comes first — its value, its timeout or its cancellation —
/// even when that happens before the waiting task handed over its continuation.
final class OneShotWait<Value: Sendable, Failure: Error>: @unchecked Sendable {
    // @unchecked: `continuation` and `result` are guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, Failure>?
    private var result: Result<Value, Failure>?

    /// Whether the wait was resolved (its value came, or it timed out or was cancelled).
    var isResolved: Bool {
        lock.lock()
        defer { lock.unlock() }
        return result != nil
    }

    /// Hands over the waiting task's continuation; resumed at once if the wait was resolved already.
    func set(_ continuation: CheckedContinuation<Value, Failure>) {
        lock.lock()
        if let result {
            lock.unlock()
            continuation.resume(with: result)   // cancelled before it began waiting
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    /// Resolves the wait with `result` unless it was resolved already; returns whether it did.
    @discardableResult
    func resolve(_ result: Result<Value, Failure>) -> Bool {
        lock.lock()
        guard self.result == nil else {
            lock.unlock()
            return false
        }
        self.result = result
        let continuation = self.continuation
        self.continuation = nil
        lock.unlock()
        continuation?.resume(with: result)
        return true
    }

    /// Resolves the wait with `result` after `seconds` unless something resolved it first: NaN, zero or
    /// a negative value mean at once, and anything longer than a year waits a year (never traps).
    func resolve(after seconds: TimeInterval, with result: Result<Value, Failure>) {
        let delay = seconds > 0 ? min(seconds, 86_400 * 365) : 0
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in resolve(result) }
    }
}
