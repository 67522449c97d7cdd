import Foundation

/// How far an upload or a download has come.
///
/// Within one attempt the figures never go backwards. When a call is retried (a refresh after a 401, a
/// ``RetryPolicy`` retry), the next attempt starts again from zero with ``attempt`` one higher, so a
/// progress bar can show the restart.
public struct TransferProgress: Sendable, Equatable {
    /// Bytes sent (an upload) or received (a download) so far in this attempt.
    public var completedBytes: Int64
    /// The bytes expected in all, when known (a `Content-Length`, or the size of the body sent).
    public var totalBytes: Int64?
    /// The attempt these figures belong to, from 1.
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
