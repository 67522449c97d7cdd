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
    // @unchecked: `buffered`, `task`, `endedNormally`, `received`, `end` and `onEnd` are guarded by `lock`;
    // the continuation is thread-safe.
    private let lock = NSLock()
    private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    let chunks: AsyncThrowingStream<Data, any Error>
    let limit: Int
    private var buffered = 0
    private var task: URLSessionTask?
    private var endedNormally = false
    /// The bytes handed to the reader (or buffered for it) so far.
    private var received: Int64 = 0
    /// How the body ended (`nil` error: whole) and its size, once it did.
    private var end: (error: (any Error)?, bytes: Int64)?
    /// Told once when the body ends; see ``whenEnded(_:)``.
    private var onEnd: (@Sendable ((any Error)?, Int64) -> Void)?

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
        received += Int64(chunk.count)
        let overflow = buffered > limit
        lock.unlock()
        if overflow {
            finish(throwing: NetworkError.responseTooLarge(limit: limit))
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
    /// Ends the stream: normally when `error` is nil. Only the first end counts (an overflow ends the stream
    /// before its cancelled task completes); ``whenEnded(_:)`` hears of it before the reader does.
    func finish(throwing error: (any Error)?) {
        lock.lock()
        guard end == nil else {
            lock.unlock()
            return
        }
        end = (error, received)
        if error == nil { endedNormally = true }
        let (onEnd, bytes) = (self.onEnd, received)
        self.onEnd = nil
        lock.unlock()
        onEnd?(error, bytes)
        if let error {
            continuation.finish(throwing: error)
        } else {
            continuation.finish()
        }
    }

    /// Calls `handler` once when the body ends (at once if it already has), with the error it ended with
    /// (`nil` when it arrived whole) and the number of bytes received.
    func whenEnded(_ handler: @escaping @Sendable ((any Error)?, Int64) -> Void) {
        lock.lock()
        guard let end else {
            onEnd = handler
            lock.unlock()
            return
        }
        lock.unlock()
        handler(end.error, end.bytes)
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
