import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkLogger {
    /// Logs `⏸ waiting for connectivity`, after the lines of the call's failed attempts not written yet
    /// (the attempt that failed because the device went offline).
    public func connectivityWaitDidStart(context: RequestContext) {
        heldAttempts.take(for: context).flatMap(\.lines).forEach(sink.write)
        sink.write("⏸ waiting for connectivity" + (context.isBackgroundRevalidation ? " (background)" : ""))
    }

    /// Logs `▶ connectivity back after 1200 ms`, or `⏹ stopped waiting for connectivity after 1200 ms: <error>`
    /// when the call's deadline passed or it was cancelled first.
    public func connectivityWaitDidEnd(duration: TimeInterval, error: (any Error)?, context: RequestContext) {
        let milliseconds = Int((duration * 1_000).rounded())
        if let error {
            sink.write("⏹ stopped waiting for connectivity after \(milliseconds) ms: \(redactor.error(error))")
        } else {
            sink.write("▶ connectivity back after \(milliseconds) ms")
        }
    }
}
