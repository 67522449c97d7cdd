import Foundation

/// How far an upload or a download has come.
///
/// Within one attempt the figures never go backwards. When the transfer starts over (a retry after a
/// refresh or by a ``RetryPolicy``, or a redirect the provider follows: each hop is a new start, on
/// every platform), it starts again from zero with ``attempt`` one higher, so a progress bar can show
/// the restart. A download that resumes (see ``ResumableDownload``) starts from the bytes it kept instead.
public struct TransferProgress: Sendable, Equatable {
    /// Bytes sent (an upload) or received (a download) so far in this attempt; for a download that resumed,
    /// the bytes kept before it plus those received.
    public var completedBytes: Int64
    /// The bytes expected in all, when known (a `Content-Length`, or the size of the body sent).
    public var totalBytes: Int64?
    /// How many times the transfer has started, from 1: the figures belong to this start. Every retry
    /// and every redirect hop is a new start, so a call redirected once counts 2 in its first attempt
    /// (``CallReport/attempts`` counts attempts only).
    public var attempt: Int

    /// Creates a progress value.
    public init(completedBytes: Int64, totalBytes: Int64?, attempt: Int = 1) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.attempt = attempt
    }

    /// `completedBytes / totalBytes` from 0 to 1, or `nil` when the total is unknown.
    public var fraction: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(completedBytes) / Double(totalBytes))
    }

    /// A stream of progress values and the reporter that feeds it. Give the reporter to
    /// ``NetworkProvider/upload(_:interceptor:progress:)`` or
    /// ``NetworkProvider/download(_:to:interceptor:progress:)``; the stream finishes when that call ends,
    /// however it ends. A slow reader sees the newest value, never a backlog.
    ///
    /// ```swift
    /// let (progress, reporter) = TransferProgress.makeStream()
    /// async let response = provider.download(FileAPI.report, to: destination, progress: reporter)
    /// for await step in progress { print("\(Int((step.fraction ?? 0) * 100)) %") }
    /// let finished = try await response
    /// ```
    public static func makeStream() -> (updates: AsyncStream<TransferProgress>, reporter: ProgressReporter) {
        let (updates, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
        return (updates, ProgressReporter(continuation: continuation))
    }
}

/// Feeds a ``TransferProgress`` stream made by ``TransferProgress/makeStream()``. The provider reports
/// through it and finishes it when the call ends.
public struct ProgressReporter: Sendable {
    let continuation: AsyncStream<TransferProgress>.Continuation

    /// Reports `progress`.
    func report(_ progress: TransferProgress) {
        continuation.yield(progress)
    }

    /// Ends the stream.
    func finish() {
        continuation.finish()
    }
}

/// The progress of one call across its attempts: numbers each start of the transfer and keeps the figures
/// of one start from going backwards.
final class ProgressTracker: @unchecked Sendable {
    // @unchecked: `attempt` and `highWater` are guarded by `lock`.
    private let lock = NSLock()
    private let reporter: ProgressReporter
    private var attempt = 0
    private var highWater: Int64 = 0

    init(_ reporter: ProgressReporter) {
        self.reporter = reporter
    }

    /// A new attempt begins: figures start again from zero.
    func startTransfer() {
        lock.lock()
        defer { lock.unlock() }
        attempt += 1
        highWater = 0
    }

    /// Reports `completed` of `expected` bytes (`expected` ≤ 0: unknown), unless it would go backwards.
    func report(_ completed: Int64, of expected: Int64) {
        lock.lock()
        guard completed >= highWater else {
            lock.unlock()
            return
        }
        highWater = completed
        let progress = TransferProgress(completedBytes: completed, totalBytes: expected > 0 ? expected : nil, attempt: attempt)
        lock.unlock()
        reporter.report(progress)
    }
}
