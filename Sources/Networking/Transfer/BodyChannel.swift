import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Carries a streamed response body from the session delegate to the one reader of a
/// ``ResponseStream``, holding at most `limit` bytes the reader has not taken yet.
///
/// The buffer is bounded, not back-pressured: URLSession on Linux cannot pause a transfer, so a reader that
/// falls more than `limit` bytes behind ends the stream with ``NetworkError/responseTooLarge(limit:)``
/// and the transfer is cancelled. A reader that keeps up never holds more than a few chunks.
final class BodyChannel: @unchecked Sendable {
    // @unchecked: `buffered`, `task` and `endedNormally` are guarded by `lock`; the continuation is thread-safe.
    private let lock = NSLock()
    private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    let chunks: AsyncThrowingStream<Data, any Error>
    let limit: Int
    private var buffered = 0
    private var task: URLSessionTask?
    private var endedNormally = false

    init(limit: Int) {
        self.limit = limit
        (chunks, continuation) = AsyncThrowingStream.makeStream(of: Data.self, throwing: (any Error).self)
        continuation.onTermination = { [weak self] termination in
            if case .cancelled = termination { self?.cancelTask() }
        }
    }

    /// The task whose body this is; cancelled when the reader stops reading.
    func attach(_ task: URLSessionTask) {
        lock.lock()
        self.task = task
        lock.unlock()
    }

    /// Hands `chunk` to the reader. Returns `false`, having ended the stream with
    /// ``NetworkError/responseTooLarge(limit:)``, when the reader is more than `limit` bytes behind.
    func send(_ chunk: Data) -> Bool {
        lock.lock()
        buffered += chunk.count
        let overflow = buffered > limit
        lock.unlock()
        if overflow {
            continuation.finish(throwing: NetworkError.responseTooLarge(limit: limit))
            return false
        }
        continuation.yield(chunk)
        return true
    }

    /// The reader took `count` bytes.
    func taken(_ count: Int) {
        lock.lock()
        buffered -= count
        lock.unlock()
    }

    /// Ends the stream: normally when `error` is nil.
    func finish(throwing error: (any Error)?) {
        if let error {
            continuation.finish(throwing: error)
        } else {
            lock.lock()
            endedNormally = true
            lock.unlock()
            continuation.finish()
        }
    }

    /// Whether the body arrived whole.
    var didEndNormally: Bool {
        lock.lock()
        defer { lock.unlock() }
        return endedNormally
    }

    /// Stops the transfer (the reader is gone or cancelled).
    func cancelTask() {
        lock.lock()
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
