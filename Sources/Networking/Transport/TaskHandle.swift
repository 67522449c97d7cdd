import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `URLSessionTask` of one attempt, so that cancelling the calling task can cancel it, whichever
/// of the two happens first.
final class TaskHandle: PlacedAttempt, @unchecked Sendable {
    // @unchecked: `task`, `isCancelled` and `expired` are guarded by `lock`, one for every handle: its
    // sections are a few loads and stores (a lock of its own cost two allocations per attempt).
    private var lock: NSLock { Self.lock }
    private static let lock = NSLock()
    private var task: URLSessionTask?
    private var isCancelled = false
    private var expired = false
    /// Its place in the heap of the ``AttemptWatch`` that watches it (see ``PlacedAttempt``), under the watch's lock.
    var watchSlot = 0

    /// Why the task was stopped from outside, if it was. (A body over the size limit is the transfer's
    /// own verdict: ``DelegateTransfer`` reports it as its error.)
    enum Stop {
        /// The calling task was cancelled (``cancel()``); this wins over the deadline.
        case cancelled
        /// The call's deadline passed (``expire()``).
        case expired
    }

    /// Why the task was stopped, if it was, read once when it completes.
    var stop: Stop? {
        lock.lock()
        defer { lock.unlock() }
        if isCancelled { return .cancelled }
        return expired ? .expired : nil
    }

    /// Cancels the task, if it started, without saying why (the caller knows: a body over its limit, a file
    /// it could not write). Called on the session's delegate queue, so the cancel is sent from another
    /// queue: on Linux `cancel()` waits for the session's work queue, which may be waiting for the delegate
    /// queue to drain (see ``BackpressureQueue``).
    func cancelTask() {
        lock.lock()
        let task = self.task
        lock.unlock()
        guard let task else { return }
        SessionDelegateQueue.leave { task.cancel() }
    }

    /// The call's deadline passed: cancels the task.
    func expire() {
        lock.lock()
        expired = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }

    /// Resumes `task`, and cancels it at once if the calling task was cancelled or the deadline
    /// passed before it started (it then completes with `cancelled`).
    func start(_ task: URLSessionTask) {
        lock.lock()
        self.task = task
        let stopped = isCancelled || expired
        lock.unlock()
        task.resume()
        if stopped { task.cancel() }
    }

    func cancel() {
        lock.lock()
        isCancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
