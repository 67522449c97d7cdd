import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a repository needs from the network: send an endpoint, get a decoded value or a ``Response``;
/// upload a body, download one to a file, or stream one as it arrives.
///
/// Repositories depend on this protocol and receive a ``NetworkProvider`` through their initializer,
/// so a test can hand them a provider wired to `NetworkingTestSupport`'s mock (or a fake of its own).
/// A fake needs only ``request(_:as:interceptor:)`` and ``response(_:interceptor:)``: every other
/// requirement has a default built on them (a download writes the fake's response body to the file, a
/// stream yields it), which a fake may replace with its own. Those defaults hold the whole body in memory
/// under the call's size limit: a type that wraps a real provider (for logging, metrics) must forward the
/// transfer requirements (`upload`, the three `download`s, `stream`) as well, or its downloads stop at the
/// size limit, its streams yield only once the body ended, and resuming and progress are lost.
///
/// ```swift
/// struct UserRepository {
///     let network: any NetworkProviding
///     func user(id: Int) async throws -> User {
///         try await network.request(UserAPI.user(id: id), as: User.self)
///     }
/// }
/// ```
public protocol NetworkProviding: Sendable {
    /// Sends `endpoint` and decodes the body as `type`.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - type: what the body decodes to, with the provider's decoder.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)?
    ) async throws -> T

    /// Sends `endpoint` and returns the raw response (body, HTTP response, request as sent).
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    func response(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?
    ) async throws -> Response

    /// Sends `endpoint` and decodes the value at `keyPath` in its JSON body as `type` (see
    /// ``request(_:as:atKeyPath:)`` for the rules). It has a default implementation, built on
    /// ``request(_:as:interceptor:)``; a fake of your own that serves key-path calls implements it (the
    /// default asks the fake for a type of the package's own, which a fake returning stubbed values cannot
    /// give, and which a decorator must not use as a cache key).
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - type: what the value at `keyPath` decodes to.
    ///   - keyPath: member names separated by dots, e.g. `"data.user"`.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        atKeyPath keyPath: String,
        interceptor: (any RequestInterceptor)?
    ) async throws -> T

    /// The stored value of `endpoint` at once, when the provider's cache holds one, then the server's
    /// (nothing more when the server says it did not change); see
    /// ``NetworkProvider/cachedThenFresh(_:as:interceptor:)``. It has a default implementation that
    /// yields the value of ``request(_:as:interceptor:)`` only, so fakes need not implement it.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - type: what the body decodes to.
    ///   - interceptor: runs after the provider's own interceptor, for the network part only.
    func cachedThenFresh<T: Decodable & Sendable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)?
    ) -> AsyncThrowingStream<CachedOrFresh<T>, any Error>

    /// Sends `endpoint`, whose body is the upload (a file, a form, data), and reports how much of it was
    /// sent; see ``NetworkProvider/upload(_:interceptor:progress:)``. It has a default implementation that
    /// returns ``response(_:interceptor:)`` (the endpoint carries its body, so a fake sees it there) and
    /// finishes `progress` without a value, so fakes need not implement it.
    ///
    /// - Parameters:
    ///   - endpoint: the call; its body is what is sent.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes sent; finished when the call ends.
    func upload(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response

    /// Sends `endpoint`, whose body is the upload (a file, a ``MultipartForm``, data), reports how much of it
    /// was sent, and decodes the answer as `type` as ``request(_:as:interceptor:)`` does (the endpoint's
    /// decoder and envelope); see ``NetworkProvider/upload(_:as:interceptor:progress:)``. It has a default
    /// implementation that returns ``request(_:as:interceptor:)`` and finishes `progress` without a value, so
    /// fakes need not implement it.
    ///
    /// - Parameters:
    ///   - endpoint: the call; its body is what is sent.
    ///   - type: what the answer decodes to.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes sent; finished when the call ends.
    func upload<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> T

    /// Downloads `endpoint`'s body into the file at `destination`, replacing any file there, and returns
    /// the response with an empty `data`; see ``NetworkProvider/download(_:to:interceptor:progress:)``.
    /// It has a default implementation that writes the `data` of ``response(_:interceptor:)`` to
    /// `destination` atomically, so fakes need not implement it.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - destination: the file URL the body lands at; its folder must exist and be writable.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes written; finished when the call ends.
    func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response

    /// Downloads `endpoint`'s body into `destination` as ``download(_:to:interceptor:progress:)`` does,
    /// continuing `resumable`, and keeps what arrived when the call fails (it throws
    /// ``DownloadInterrupted``); see ``NetworkProvider/download(_:to:resuming:interceptor:progress:)``. It
    /// has a default implementation that ignores `resumable` and downloads as the default of
    /// ``download(_:to:interceptor:progress:)`` does: a fake's body arrives whole or not at all.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - destination: the file URL the body lands at; its folder must exist and be writable.
    ///   - resumable: what an earlier call of this endpoint kept, or `nil` to start from the first byte.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes in the file; finished when the call ends.
    func download(
        _ endpoint: some Endpoint,
        to destination: URL,
        resuming resumable: ResumableDownload?,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response

    /// Continues an interrupted download into `destination` without its endpoint: a `GET` of
    /// ``ResumableDownload/url``; see ``NetworkProvider/download(resuming:to:interceptor:progress:)``. It has
    /// a default implementation that downloads that `GET` whole through ``response(_:interceptor:)``.
    ///
    /// - Parameters:
    ///   - resumable: what the interrupted call kept (``DownloadInterrupted/resumable``).
    ///   - destination: the file URL the body lands at; its folder must exist and be writable.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    ///   - progress: receives the bytes in the file; finished when the call ends.
    func download(
        resuming resumable: ResumableDownload,
        to destination: URL,
        interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response

    /// Sends `endpoint` and returns its body as it arrives, once the response's status was accepted; see
    /// ``NetworkProvider/stream(_:interceptor:)``. It has a default implementation that streams the `data`
    /// of ``response(_:interceptor:)`` as one chunk, so fakes need not implement it.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - interceptor: runs after the provider's own interceptor, for this call only.
    func stream(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?
    ) async throws -> ResponseStream
}

extension NetworkProviding {
    /// Sends `endpoint` and decodes the body as `type`, with the provider's interceptor only.
    public func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type) async throws -> T {
        try await request(endpoint, as: type, interceptor: nil)
    }

    /// Sends `endpoint` and returns the raw response, with the provider's interceptor only.
    public func response(_ endpoint: some Endpoint) async throws -> Response {
        try await response(endpoint, interceptor: nil)
    }

    /// Sends `endpoint` and decodes the body as `type`, with `adapter` run after the provider's own
    /// interceptor for this call only: a per-call header needs no ``Interceptor`` around it. Only its
    /// `adapt` is used: pass a full ``RequestInterceptor`` (an ``AuthInterceptor``, a ``RetryPolicy``) as
    /// `interceptor:` instead, or its retries are lost.
    ///
    /// ```swift
    /// let user = try await provider.request(UserAPI.me, as: User.self, adapter: ClosureAdapter { request, _ in
    ///     var request = request
    ///     request.setValue(traceID, forHTTPHeaderField: "X-Trace-ID")
    ///     return request
    /// })
    /// ```
    public func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, adapter: any RequestAdapter) async throws -> T {
        try await request(endpoint, as: type, interceptor: Interceptor(adapters: [adapter]))
    }

    /// Sends `endpoint` and decodes the body as `type`, with `retrier` asked after the provider's own
    /// interceptor for this call only (say, a ``RetryPolicy`` for one flaky call).
    public func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, retrier: any RequestRetrier) async throws -> T {
        try await request(endpoint, as: type, interceptor: Interceptor(retriers: [retrier]))
    }

    /// Sends `endpoint` and returns the raw response, with `adapter` run for this call only.
    public func response(_ endpoint: some Endpoint, adapter: any RequestAdapter) async throws -> Response {
        try await response(endpoint, interceptor: Interceptor(adapters: [adapter]))
    }

    /// Sends `endpoint` and returns the raw response, with `retrier` asked for this call only.
    public func response(_ endpoint: some Endpoint, retrier: any RequestRetrier) async throws -> Response {
        try await response(endpoint, interceptor: Interceptor(retriers: [retrier]))
    }

    /// Sends `endpoint` and ignores the body, with `adapter` run for this call only.
    public func request(_ endpoint: some Endpoint, adapter: any RequestAdapter) async throws {
        _ = try await response(endpoint, interceptor: Interceptor(adapters: [adapter]))
    }

    /// Sends `endpoint` and ignores the body, with `retrier` asked for this call only.
    public func request(_ endpoint: some Endpoint, retrier: any RequestRetrier) async throws {
        _ = try await response(endpoint, interceptor: Interceptor(retriers: [retrier]))
    }

    /// Sends `endpoint` and ignores the body: for `204 No Content` and other calls that return nothing
    /// the caller needs. Throws like the other variants when the status is not acceptable.
    public func request(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)? = nil) async throws {
        _ = try await response(endpoint, interceptor: interceptor)
    }
}
