import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkLogger {
    /// Logs a failed attempt, `attempt 1: GET https://api.example.com/v1/me → 401 in 9 ms: <error>` (or
    /// `→ failed in …` when no response came), its error as ``Redactor/error(_:)`` shows it; in verbose
    /// mode with its request's and response's headers and bodies. The line is held until the call's
    /// next attempt is decided (a retry, a token refresh), or its end: see ``Verbosity`` for when it is
    /// written.
    public func attemptDidFail(
        _ request: URLRequest, response: Response?, error: any Error, attempt: Int, duration: TimeInterval, context: RequestContext
    ) {
        let method = request.httpMethod ?? "GET"
        let url = request.url.map(redactor.url) ?? "?"
        let outcome = response.map { "\($0.statusCode)" } ?? "failed"
        var lines = ["attempt \(attempt): \(method) \(url) → \(outcome) in \(Int((duration * 1_000).rounded())) ms: \(redactor.error(error))"]
        if verbosity == .verbose {
            lines.append(describe("request", headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody))
            if let response {
                lines.append(describe("response", headers: Self.headers(of: response), body: response.data))
            }
        }
        heldAttempts.hold(HeldAttemptLines.Attempt(lines: lines, saysMore: !(error is NetworkError)), for: context)
    }

    /// Writes the lines of the call's failed attempts when another attempt follows.
    public func retryDidDecide(_ result: RetryResult, attempt: Int, error: any Error, context: RequestContext) {
        switch result {
        case .retry, .retryWithDelay: heldAttempts.take(for: context).flatMap(\.lines).forEach(sink.write)
        case .doNotRetry, .doNotRetryWithError: break
        }
    }

    /// Writes the lines of the call's failed attempts before those of the refresh call it started.
    public func tokenRefreshDidStart(context: RequestContext) {
        heldAttempts.take(for: context).flatMap(\.lines).forEach(sink.write)
    }
}

/// The lines of failed attempts a ``NetworkLogger`` has not written yet, per call: held until the call
/// goes on (written) or ends (written or dropped, see ``NetworkLogger/Verbosity``).
final class HeldAttemptLines: @unchecked Sendable {
    // @unchecked: `held` is guarded by `lock`.

    /// One failed attempt's lines.
    struct Attempt {
        /// Its line, and in verbose mode its request's and response's.
        let lines: [String]
        /// Whether its line says more than the call's line would: its error is no ``NetworkError``.
        let saysMore: Bool
    }

    private let lock = NSLock()
    /// Per call; the context is kept so that its identifier is not reused while its lines are held.
    private var held: [ObjectIdentifier: (context: RequestContext, attempts: [Attempt])] = [:]

    func hold(_ attempt: Attempt, for context: RequestContext) {
        lock.lock()
        defer { lock.unlock() }
        held[ObjectIdentifier(context), default: (context, [])].attempts.append(attempt)
    }

    /// The attempts held for `context`, which are no longer held.
    func take(for context: RequestContext) -> [Attempt] {
        lock.lock()
        defer { lock.unlock() }
        return held.removeValue(forKey: ObjectIdentifier(context))?.attempts ?? []
    }
}
