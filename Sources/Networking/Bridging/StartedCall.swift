import Foundation

/// One provider call started from callback-based code (the Combine publishers): it runs in its own task,
/// reports once, and can be cancelled from any thread.
///
/// The rules every bridge relies on, kept here so that they are tested on Linux, where Combine is not:
/// nothing runs until ``start(_:completion:)``; `completion` is called exactly once, unless
/// ``cancel()`` came first, in which case it is never called; cancelling cancels the call's task, which
/// cancels its `URLSessionTask`.
final class StartedCall: @unchecked Sendable {
    // @unchecked: `task` and `finished` are guarded by `lock`.
    private let lock = NSLock()
    private var task: Task<Void, Never>?
    private var finished = false

    private init() {}

    /// Starts `operation` in a new task; `completion` gets its result unless the call is cancelled first.
    static func start<Output: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Output,
        completion: @escaping @Sendable (Result<Output, any Error>) -> Void
    ) -> StartedCall {
        let call = StartedCall()
        let task = Task {
            let result: Result<Output, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            if call.finish() { completion(result) }
        }
        call.lock.lock()
        call.task = task
        call.lock.unlock()
        return call
    }

    /// Marks the call finished; `false` when it already was (cancelled, or reported).
    private func finish() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if finished { return false }
        finished = true
        return true
    }

    /// Cancels the call: its completion will not be called.
    func cancel() {
        lock.lock()
        finished = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
