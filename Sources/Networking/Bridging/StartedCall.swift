import Foundation

/// One provider call started from callback-based code (the Combine publishers): it runs in its own task,
/// reports once, and can be cancelled from any thread.
///
/// The rules every bridge relies on, kept here so that they are tested on Linux, where Combine is not:
/// nothing runs until ``start(_:completion:)``; `completion` is called exactly once, unless
/// ``cancel()`` came first, in which case it is never called; cancelling cancels the call's task, which
/// cancels its `URLSessionTask`.
///
/// Ownership: the running task holds the call, and the call holds `completion` (and whatever it
/// captures, such as a Combine subscription and its subscriber) until it has been called or the call is
/// cancelled, then lets go at once. So a bridge captures itself **strongly** in `completion`: its result
/// is delivered even if nobody else holds the bridge or this call, and the cycle ends with the call
/// instead of outliving it.
final class StartedCall<Output: Sendable>: @unchecked Sendable {
    // @unchecked: `task`, `completion` and `finished` are guarded by `lock`.
    private let lock = NSLock()
    private var task: Task<Void, Never>?
    private var finished = false
    /// `nil` once called or cancelled.
    private var completion: (@Sendable (Result<Output, any Error>) -> Void)?

    private init() {}

    /// Starts `operation` in a new task; `completion` gets its result unless the call is cancelled first.
    /// `completion` is held until it is called or the call is cancelled, and released then.
    static func start(
        _ operation: @escaping @Sendable () async throws -> Output,
        completion: @escaping @Sendable (Result<Output, any Error>) -> Void
    ) -> StartedCall {
        let call = StartedCall()
        call.completion = completion
        let task = Task {
            let result: Result<Output, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            call.finish()?(result)
        }
        call.lock.lock()
        call.task = task
        call.lock.unlock()
        return call
    }

    /// Marks the call finished and hands over its completion; `nil` when it already was (cancelled, or
    /// reported).
    private func finish() -> (@Sendable (Result<Output, any Error>) -> Void)? {
        lock.lock()
        defer { lock.unlock() }
        if finished { return nil }
        finished = true
        let completion = self.completion
        self.completion = nil
        return completion
    }

    /// Cancels the call: its completion will not be called, and is released now.
    func cancel() {
        lock.lock()
        finished = true
        let task = self.task
        let completion = self.completion
        self.completion = nil
        lock.unlock()
        task?.cancel()
        _ = completion   // released here, outside the lock: it may hold the last reference to a bridge
    }
}
