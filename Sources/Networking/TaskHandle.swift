import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `URLSessionTask` of one attempt, so that cancelling the calling task can cancel it, whichever
/// of the two happens first.
final class TaskHandle: WatchedAttempt, @unchecked Sendable {
    // @unchecked: `task`, `isCancelled`, `expired` and `tooLarge` are guarded by `lock`.
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var isCancelled = false
    private var expired = false
    private var tooLarge = false
    /// Why the task was stopped, if it was.
    enum Stop {
        /// The calling task was cancelled (``cancel()``); this wins over the others.
        case cancelled
        /// The body, or its declared length, was over the size limit (``stopForSize()``).
        case tooLarge
        /// The call's deadline passed (``expire()``).
        case expired
    }

    /// Why the task was stopped, if it was, read once when it completes.
    var stop: Stop? {
        lock.lock()
        defer { lock.unlock() }
        if isCancelled { return .cancelled }
        if tooLarge { return .tooLarge }
        return expired ? .expired : nil
    }

    /// The body is over the size limit: cancels the task.
    func stopForSize() {
        lock.lock()
        tooLarge = true
        let task = self.task
        lock.unlock()
        task?.cancel()
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
