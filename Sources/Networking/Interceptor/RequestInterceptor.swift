import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Both a ``RequestAdapter`` and a ``RequestRetrier``. Implement only what you need: by default
/// `adapt` returns the request unchanged and `retry` answers ``RetryResult/doNotRetry``.
///
/// ```swift
/// struct APIKeyInterceptor: RequestInterceptor {
///     func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
///         var request = request
///         request.setValue("my-key", forHTTPHeaderField: "X-API-Key")
///         return request
///     }
/// }
/// ```
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Returns the request unchanged.
    public func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        request
    }

    /// Does not retry.
    public func retry(
        _ request: URLRequest,
        dueTo error: any Error,
        response: Response?,
        context: RequestContext
    ) async -> RetryResult {
        .doNotRetry
    }
}
