import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkLogger {
    /// Logs a failed attempt, `attempt 1: GET https://api.example.com/v1/me → 401 in 9 ms: <error>` (or
    /// `→ failed in …` when no response came; a redirect that was refused shows its status), its error as
    /// ``Redactor/error(_:)`` shows it; in verbose mode with its request's and response's headers and
    /// bodies. An attempt that failed after following redirects is named by the last hop's method and URL.
    /// The line is held until the call's next attempt is decided (a retry, a token refresh), or its end:
    /// see ``Verbosity`` for when it is written.
    public func attemptDidFail(
        _ request: URLRequest, response: Response?, error: any Error, attempt: Int, duration: TimeInterval, context: RequestContext
    ) {
        var method = request.httpMethod ?? "GET"
        var url = request.url.map(redactor.url) ?? "?"
        if response == nil, let hop = heldAttempts.lastHop(of: attempt, for: context) {
            (method, url) = (hop.method, URL(string: hop.to).map(redactor.url) ?? hop.to)
        }
        let outcome = response.map { "\($0.statusCode)" } ?? Self.refusedRedirectStatus(error).map { "\($0)" } ?? "failed"
        let milliseconds = Int((duration * 1_000).rounded())
        var lines = [Self.marked("attempt \(attempt): \(method) \(url) → \(outcome) in \(milliseconds) ms: \(redactor.error(error))", context)]
        if verbosity == .verbose {
            lines.append(describe("request", headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody))
            if let response {
                lines.append(describe("response", headers: Self.headers(of: response), body: response.data))
            }
        }
        heldAttempts.hold(HeldAttemptLines.Attempt(lines: lines, saysMore: !(error is NetworkError)), for: context)
    }

    /// `line` starting with `(background) ` when it is about a background revalidation (RFC 5861 §3): every
    /// line of such a call (its attempts, redirects, cache answer and end) is marked alike.
    static func marked(_ line: String, _ context: RequestContext) -> String {
        context.isBackgroundRevalidation ? "(background) " + line : line
    }

    /// The status of a redirect the provider refused to follow, which `error` says.
    private static func refusedRedirectStatus(_ error: any Error) -> Int? {
        switch error as? NetworkError {
        case .redirectWouldForwardBody(let status)?, .insecureRedirect(let status)?: return status
        default: return nil
        }
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
