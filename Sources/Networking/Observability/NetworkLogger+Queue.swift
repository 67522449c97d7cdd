import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkLogger {
    /// In verbose mode, logs `⏸ queued for https://api.example.com:443` (no free slot under the provider's
    /// ``Scheduling`` limits); in basic mode the wait's end says it all, in one line.
    public func queueWaitDidStart(origin: Origin, context: RequestContext) {
        guard verbosity == .verbose else { return }
        sink.write(Self.marked("⏸ queued for \(origin)", context))
    }

    /// Logs `▶ sent after 1200 ms in the queue`, or `⏹ left the queue after 1200 ms: <error>` when the call
    /// was cancelled or its deadline passed first.
    public func queueWaitDidEnd(duration: TimeInterval, error: (any Error)?, context: RequestContext) {
        let milliseconds = Int((duration * 1_000).rounded())
        if let error {
            sink.write(Self.marked("⏹ left the queue after \(milliseconds) ms: \(redactor.error(error))", context))
        } else {
            sink.write(Self.marked("▶ sent after \(milliseconds) ms in the queue", context))
        }
    }
}
