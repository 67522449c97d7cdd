import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Observes what the provider does with each call. Every method has an empty default: implement only
/// what you need.
///
/// **Context.** The provider never calls a monitor from the request's own task: each event is queued,
/// in the order it happened, on the provider's serial event queue, and the monitors are called there
/// one after another. A slow monitor therefore delays only later events, never a request, and cannot
/// reorder the pipeline. Events of concurrent calls interleave; events of one call arrive in order.
///
/// **Order.** For one call: ``requestDidBuild(_:context:)``; then for each attempt
/// ``requestDidAdapt(_:context:)`` (when the call has interceptors), ``queueWaitDidStart(origin:context:)`` and
/// ``queueWaitDidEnd(duration:error:context:)`` (when no slot was free under the provider's ``Scheduling``),
/// ``taskDidStart(_:context:)``,
/// ``requestDidRedirect(_:context:)`` for each redirect followed, ``responseDidArrive(_:duration:context:)`` (when a response came), ``validationDidFail(_:error:context:)``
/// (when it was not acceptable), ``attemptDidFail(_:response:error:attempt:duration:context:)`` (when the
/// attempt failed, for whatever reason) and, when the attempt failed and another was allowed,
/// ``retryDidDecide(_:attempt:error:context:)``, with the token refresh events in between when the call
/// waited for one; ``cacheDidAnswer(_:key:context:)`` when the call used the response cache; last, ``requestDidFinish(_:result:attempts:duration:context:)``.
/// A call that joined an identical one in flight (see ``Scheduling/coalescesIdenticalCalls``) is told
/// ``callDidJoin(_:context:)`` then its own ``requestDidFinish(_:result:attempts:duration:context:)``; the shared
/// exchange's events are told under the context of the call that started it. Every event of a call
/// is queued before the call returns or throws, so after ``NetworkProvider/waitForMonitors()`` they have
/// all been delivered: tests need no polling. A streamed call
/// (``NetworkProvider/stream(_:interceptor:)``) finishes when its stream is handed out; its
/// ``streamDidEnd(_:error:bytes:context:)`` follows when the body ended, queued before the reader sees
/// the end or the error (a body its reader stopped, by leaving its loop or cancelling, ends a moment later,
/// when the cancelled transfer completes). One exception: when a call is cancelled while it waits for a
/// token refresh, the refresh goes on for the other calls, and its `tokenRefreshDidSucceed`/`DidFail`
/// (and the refresh request's own events) come when it ends.
///
/// ```swift
/// struct StatusCounter: EventMonitor {
///     let counts: Counter
///     func responseDidArrive(_ response: Response, duration: TimeInterval, context: RequestContext) {
///         counts.add(response.statusCode)
///     }
/// }
/// let provider = NetworkProvider(monitors: [NetworkLogger(), StatusCounter(counts: counts)])
/// ```
public protocol EventMonitor: Sendable {
    /// The endpoint was turned into a request (once per call).
    func requestDidBuild(_ request: URLRequest, context: RequestContext)
    /// The interceptors adapted the request for an attempt (once per attempt).
    func requestDidAdapt(_ request: URLRequest, context: RequestContext)
    /// The `URLSessionTask` for an attempt was started.
    func taskDidStart(_ request: URLRequest, context: RequestContext)
    /// An attempt's request was redirected and the provider follows: `hop` says from where to where
    /// (URLs redacted) with which status. Called once per hop, before the next hop's task starts.
    func requestDidRedirect(_ hop: RedirectHop, context: RequestContext)
    /// An attempt received a response; `duration` runs from the task's start, and the body's size is
    /// `response.data.count`.
    func responseDidArrive(_ response: Response, duration: TimeInterval, context: RequestContext)
    /// A response was not acceptable — an attempt's, or the cache's answer — its status rejected by the
    /// endpoint or its envelope reporting a failure (then ``Response/envelopeStatusCode`` is set); `error`
    /// is what will be thrown unless it is retried (a cache answer never is).
    func validationDidFail(_ response: Response, error: any Error, context: RequestContext)
    /// An attempt failed: `error` is what it ended with (a ``NetworkError`` such as the unacceptable
    /// status or the transport's failure, or the app's error as the provider's ``ErrorResponseMapper``
    /// made it), `response` what it received (`nil` when none came), `request` the request that received
    /// `response` (the last hop's, after redirects) or, when none came, the attempt's request as adapted
    /// (its hops were told to ``requestDidRedirect(_:context:)``), `attempt` its number (1-based) and
    /// `duration` its time from the start of its task, or, when it failed before its task started (an
    /// adapter threw, the deadline passed while the interceptors waited for a token refresh, or the call
    /// left the queue for a slot), from the start of the attempt, that wait included. Told for every
    /// attempt that failed, the call's last included, after ``validationDidFail(_:error:context:)`` and
    /// before ``retryDidDecide(_:attempt:error:context:)``. Show `error` through ``Redactor/error(_:)``: its own
    /// descriptions may hold what the server said.
    func attemptDidFail(
        _ request: URLRequest, response: Response?, error: any Error, attempt: Int, duration: TimeInterval, context: RequestContext)
    /// The retriers answered for a failed attempt: `attempt` is the attempt that failed (1-based),
    /// `error` the reason.
    func retryDidDecide(_ result: RetryResult, attempt: Int, error: any Error, context: RequestContext)
    /// An interceptor started refreshing the access token because of this call.
    func tokenRefreshDidStart(context: RequestContext)
    /// The token refresh started for this call succeeded.
    func tokenRefreshDidSucceed(context: RequestContext)
    /// The token refresh started for this call failed with `error`.
    func tokenRefreshDidFail(_ error: any Error, context: RequestContext)
    /// The call ended: `request` is the last request sent (or as built, if none was sent), `attempts`
    /// how many were made, and `duration` the whole call's.
    func requestDidFinish(
        _ request: URLRequest,
        result: Result<Response, any Error>,
        attempts: Int,
        duration: TimeInterval,
        context: RequestContext
    )
    /// The body of a streamed call (``NetworkProvider/stream(_:interceptor:)``) ended, after its
    /// ``requestDidFinish(_:result:attempts:duration:context:)``: whole when `error` is `nil`, else with
    /// the ``NetworkError`` its reader got or would get (the connection dropped, the reader fell too far
    /// behind, the reader stopped: ``NetworkError/cancelled``). `response` is the one the stream was
    /// handed out with; `bytes` is how many body bytes arrived.
    func streamDidEnd(_ response: Response, error: (any Error)?, bytes: Int64, context: RequestContext)
    /// The provider's response cache took part in the call (see ``CacheResult``): once per call that
    /// used it, before its ``requestDidFinish(_:result:attempts:duration:context:)``. A ``CacheResult/hit``
    /// follows ``requestDidBuild(_:context:)`` directly: no attempt was made. `key` holds no secret.
    func cacheDidAnswer(_ result: CacheResult, key: CacheKey, context: RequestContext)
    /// A server's certificate chain, trusted by the system, has none of the pins of its host (see
    /// ``ServerTrust``; Apple platforms only, where pins are checked). Told during the attempt, after
    /// ``taskDidStart(_:context:)``, once per connection (a reused connection is not checked again). When
    /// `mismatch.isReportOnly`, the call goes on; otherwise it fails with ``NetworkError/pinMismatch(host:)``.
    func pinValidationDidFail(_ mismatch: PinMismatch, context: RequestContext)
    /// The call found the device offline (its ``Connectivity`` says so: before an attempt, or when one
    /// failed for that reason) and waits for the network, spending no attempt.
    func connectivityWaitDidStart(context: RequestContext)
    /// The call's wait for the network ended after `duration` seconds: the path came back (`error` is
    /// `nil`, and the call sends again), or the wait ended with `error` (the call's deadline passed, or it
    /// was cancelled).
    func connectivityWaitDidEnd(duration: TimeInterval, error: (any Error)?, context: RequestContext)
    /// The call's request found no free slot under the provider's ``Scheduling`` limits (provider-wide, or
    /// for `origin`, the scheme, host and port it goes to) and waits in the queue, before its
    /// ``taskDidStart(_:context:)`` (or, for a redirect hop, after its ``requestDidRedirect(_:context:)``).
    func queueWaitDidStart(origin: Origin, context: RequestContext)
    /// The call's wait in the queue ended after `duration` seconds: it got a slot (`error` is `nil`, and
    /// its request is sent), or it left the queue with `error` (it was cancelled, or its deadline passed).
    func queueWaitDidEnd(duration: TimeInterval, error: (any Error)?, context: RequestContext)
    /// The call joined an identical call already in flight (see ``Scheduling/coalescesIdenticalCalls``):
    /// it sends nothing itself and shares that call's exchange, whose events are told for the call that
    /// started it. `request` is the request this call built. Its own
    /// ``requestDidFinish(_:result:attempts:duration:context:)`` follows when it ends: with the shared
    /// outcome, or with its own cancellation or deadline.
    func callDidJoin(_ request: URLRequest, context: RequestContext)
}

extension EventMonitor {
    /// Does nothing by default.
    public func requestDidBuild(_ request: URLRequest, context: RequestContext) {}
    /// Does nothing by default.
    public func requestDidAdapt(_ request: URLRequest, context: RequestContext) {}
    /// Does nothing by default.
    public func taskDidStart(_ request: URLRequest, context: RequestContext) {}
    /// Does nothing by default.
    public func requestDidRedirect(_ hop: RedirectHop, context: RequestContext) {}
    /// Does nothing by default.
    public func responseDidArrive(_ response: Response, duration: TimeInterval, context: RequestContext) {}
    /// Does nothing by default.
    public func validationDidFail(_ response: Response, error: any Error, context: RequestContext) {}
    /// Does nothing by default.
    public func attemptDidFail(
        _ request: URLRequest, response: Response?, error: any Error, attempt: Int, duration: TimeInterval, context: RequestContext
    ) {}
    /// Does nothing by default.
    public func retryDidDecide(_ result: RetryResult, attempt: Int, error: any Error, context: RequestContext) {}
    /// Does nothing by default.
    public func tokenRefreshDidStart(context: RequestContext) {}
    /// Does nothing by default.
    public func tokenRefreshDidSucceed(context: RequestContext) {}
    /// Does nothing by default.
    public func tokenRefreshDidFail(_ error: any Error, context: RequestContext) {}
    /// Does nothing by default.
    public func requestDidFinish(
        _ request: URLRequest,
        result: Result<Response, any Error>,
        attempts: Int,
        duration: TimeInterval,
        context: RequestContext
    ) {}
    /// Does nothing by default.
    public func streamDidEnd(_ response: Response, error: (any Error)?, bytes: Int64, context: RequestContext) {}
    /// Does nothing by default.
    public func cacheDidAnswer(_ result: CacheResult, key: CacheKey, context: RequestContext) {}
    /// Does nothing by default.
    public func pinValidationDidFail(_ mismatch: PinMismatch, context: RequestContext) {}
    /// Does nothing by default.
    public func connectivityWaitDidStart(context: RequestContext) {}
    /// Does nothing by default.
    public func connectivityWaitDidEnd(duration: TimeInterval, error: (any Error)?, context: RequestContext) {}
    /// Does nothing by default.
    public func queueWaitDidStart(origin: Origin, context: RequestContext) {}
    /// Does nothing by default.
    public func queueWaitDidEnd(duration: TimeInterval, error: (any Error)?, context: RequestContext) {}
    /// Does nothing by default.
    public func callDidJoin(_ request: URLRequest, context: RequestContext) {}
}

/// The provider's monitors behind one serial queue: the pipeline only enqueues, never waits.
final class EventDispatcher: Sendable {
    private let monitors: [any EventMonitor]
    private let queue = DispatchQueue(label: "Networking.EventMonitor")

    init(_ monitors: [any EventMonitor]) {
        self.monitors = monitors
    }

    /// Whether there is anyone to tell; the hot path checks it first so that, without monitors, no
    /// event closure is even allocated.
    var isEmpty: Bool { monitors.isEmpty }

    func send(_ event: @escaping @Sendable (any EventMonitor) -> Void) {
        guard !monitors.isEmpty else { return }
        queue.async { [monitors] in
            for monitor in monitors { event(monitor) }
        }
    }

    /// Returns once every event queued before the call has been delivered.
    func drain() async {
        guard !monitors.isEmpty else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}
