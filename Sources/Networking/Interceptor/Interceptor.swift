import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Combines adapters and retriers into one ``RequestInterceptor``.
///
/// Adapters run in order, each receiving the previous one's output; the first that throws stops the
/// chain. Retriers are asked in order; the first answer other than ``RetryResult/doNotRetry`` wins.
///
/// ```swift
/// let interceptor = Interceptor(interceptors: [auth, RetryPolicy()])
/// let tagged = Interceptor(adapters: [ClosureAdapter { request, _ in
///     var request = request
///     request.setValue("ios", forHTTPHeaderField: "X-Client")
///     return request
/// }])
/// ```
public struct Interceptor: RequestInterceptor {
    /// The adapters, in the order they run.
    public let adapters: [any RequestAdapter]
    /// The retriers, in the order they are asked.
    public let retriers: [any RequestRetrier]

    /// Creates an interceptor from separate adapters and retriers.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = []) {
        self.adapters = adapters
        self.retriers = retriers
    }

    /// Creates an interceptor whose adapters and retriers are `interceptors`, in order.
    public init(interceptors: [any RequestInterceptor]) {
        self.adapters = interceptors
        self.retriers = interceptors
    }

    /// Creates an interceptor from two closures, for one-off use. For only one of the two, pass a
    /// ``ClosureAdapter`` or ``ClosureRetrier`` to ``init(adapters:retriers:)``.
    public init(
        adapter: @escaping @Sendable (URLRequest, RequestContext) async throws -> URLRequest,
        retrier: @escaping @Sendable (URLRequest, any Error, Response?, RequestContext) async -> RetryResult
    ) {
        self.init(adapters: [ClosureAdapter(adapter)], retriers: [ClosureRetrier(retrier)])
    }

    /// Runs the adapters in order, each on the previous one's output; the first that throws stops the chain.
    public func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        var request = request
        for adapter in adapters {
            request = try await adapter.adapt(request, for: context)
        }
        return request
    }

    /// Asks the retriers in order and returns the first answer other than ``RetryResult/doNotRetry``, or that when every one answers it.
    public func retry(
        _ request: URLRequest,
        dueTo error: any Error,
        response: Response?,
        context: RequestContext
    ) async -> RetryResult {
        for retrier in retriers {
            let result = await retrier.retry(request, dueTo: error, response: response, context: context)
            if case .doNotRetry = result { continue }
            return result
        }
        return .doNotRetry
    }
}

/// A ``RequestAdapter`` made from a closure.
public struct ClosureAdapter: RequestAdapter {
    let body: @Sendable (URLRequest, RequestContext) async throws -> URLRequest

    /// Creates an adapter that runs `body`.
    public init(_ body: @escaping @Sendable (URLRequest, RequestContext) async throws -> URLRequest) {
        self.body = body
    }

    /// Returns what the closure returns for `request` and `context`.
    public func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        try await body(request, context)
    }
}

/// A ``RequestRetrier`` made from a closure.
public struct ClosureRetrier: RequestRetrier {
    let body: @Sendable (URLRequest, any Error, Response?, RequestContext) async -> RetryResult

    /// Creates a retrier that runs `body`.
    public init(_ body: @escaping @Sendable (URLRequest, any Error, Response?, RequestContext) async -> RetryResult) {
        self.body = body
    }

    /// Returns the closure's answer for the failed attempt.
    public func retry(
        _ request: URLRequest,
        dueTo error: any Error,
        response: Response?,
        context: RequestContext
    ) async -> RetryResult {
        await body(request, error, response, context)
    }
}
