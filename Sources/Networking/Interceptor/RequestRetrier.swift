import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Decides whether a failed attempt is sent again.
///
/// Asked after any failure but cancellation: a transport error, an unacceptable status, or an error
/// thrown by an adapter. The provider's hard cap on attempts holds whatever a retrier answers.
public protocol RequestRetrier: Sendable {
    /// Returns whether, and when, to retry.
    ///
    /// - Parameters:
    ///   - request: the request as sent (adapted), or as built when adaptation failed.
    ///   - error: the attempt's error, e.g. ``NetworkError/invalidStatusCode(_:)``.
    ///   - response: the HTTP response when there was one, with status, headers and body.
    ///   - context: the call's context; ``RequestContext/retryCount`` says how often it was retried so far.
    func retry(
        _ request: URLRequest,
        dueTo error: any Error,
        response: Response?,
        context: RequestContext
    ) async -> RetryResult
}
