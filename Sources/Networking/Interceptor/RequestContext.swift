import Foundation

/// What interceptors know about one call to the provider, across all of its attempts.
///
/// The provider makes one context per call and passes the same instance to every adapt and retry of
/// that call. Interceptors may keep per-call notes in it with ``subscript(_:)`` (for example,
/// ``AuthInterceptor`` notes that it has already retried this call for authentication).
public final class RequestContext: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `lock`, one for every context: its sections are a few
    // loads and stores, taken only by interceptors (a lock of its own cost two allocations per call).

    /// The endpoint this call was built from.
    public let endpoint: any Endpoint
    /// The provider's monitors, for interceptors that report events (such as token refreshes): the
    /// provider's own, unless the context was made with others (kept in `special` then).
    var events: EventDispatcher { special?.events ?? provider?.events ?? Self.noEvents }
    /// Where a context made with no provider and no monitors reports to.
    private static let noEvents = EventDispatcher([])
    /// The provider sending this call, so that an ``AuthInterceptor`` can send its refresh through it.
    let provider: NetworkProvider?
    /// The ``AuthInterceptor`` (by its identity) whose token refresh this call sends, if any: that
    /// interceptor neither authenticates nor refreshes for it.
    var refreshing: UUID? { special?.refreshing }
    /// Whether this call is the provider's background revalidation of a cache entry that answered another
    /// call stale (`Cache-Control: stale-while-revalidate`, RFC 5861 §3): no caller waits for it. Monitors
    /// see its events like any call's.
    public var isBackgroundRevalidation: Bool { special?.revalidatedKey != nil }
    /// The key of the entry this background revalidation is about (the account's whose entry answered):
    /// `nil` for any other call.
    var revalidatedKey: CacheKey? { special?.revalidatedKey }
    /// What only a token refresh's call, a background revalidation or an outbox's mutation has: most calls
    /// have none of it, and a context is made for every call (a call queued behind the limits keeps it).
    private let special: SpecialCall?
    /// The account whose token the call may carry (an outbox's mutation, see ``AccountBoundEndpoint``), `nil`
    /// for any: read once, where the call is made, so that no adapt casts the endpoint.
    var boundAccount: String? { special?.boundAccount }
    /// How long the call waited for a free slot under the provider's ``Scheduling`` limits, in seconds
    /// (see ``CallReport/queueWait``). Written and read only by the call's own task.
    var queueWait: TimeInterval = 0
    /// The call's place in the queue of the provider's ``Scheduling`` limits among the calls of its
    /// priority: taken by its first exchange, kept by its later ones (redirect hops, retries, a resend
    /// after a refresh), so that they do not wait behind the calls that came after it; 0 before. Written
    /// and read only by the call's own task.
    var queueArrival: UInt64 = 0
    private var lock: NSLock { Self.lock }
    private static let lock = NSLock()
    private var _retryCount = 0
    private var notes: [String: any Sendable] = [:]

    /// Creates a context for a call to `endpoint`. The provider makes one per call; make your own to
    /// test an interceptor directly. An ``AuthInterceptor`` sends a refresh it starts for this context
    /// through `provider` (it fails with ``NetworkError/refreshFailed(_:)`` when there is none).
    public convenience init(endpoint: any Endpoint, provider: NetworkProvider? = nil) {
        self.init(endpoint: endpoint, events: EventDispatcher([]), provider: provider, refreshing: nil)
    }

    init(endpoint: some Endpoint, events: EventDispatcher, provider: NetworkProvider?, refreshing: UUID?, revalidatedKey: CacheKey? = nil) {
        self.endpoint = endpoint
        self.provider = provider
        let boundAccount = (endpoint as? any AccountBoundEndpoint)?.boundAccount
        let ownEvents = events === provider?.events || (provider == nil && events.isEmpty) ? nil : events
        self.special =
            refreshing == nil && revalidatedKey == nil && boundAccount == nil && ownEvents == nil
            ? nil : SpecialCall(refreshing: refreshing, revalidatedKey: revalidatedKey, boundAccount: boundAccount, events: ownEvents)
    }

    /// How many times this call has been retried so far: 0 during the first attempt.
    public var retryCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return _retryCount
    }

    /// A per-call note kept by an interceptor; use a key that names your interceptor.
    public subscript(key: String) -> (any Sendable)? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return notes[key]
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            notes[key] = newValue
        }
    }

    func recordRetry() {
        lock.lock()
        defer { lock.unlock() }
        _retryCount += 1
    }
}

/// What a ``RequestContext`` of a token refresh's call, a background revalidation or an outbox's mutation
/// keeps, and the monitors of a context made with others than its provider's.
private final class SpecialCall: Sendable {
    let refreshing: UUID?
    let revalidatedKey: CacheKey?
    let boundAccount: String?
    /// Monitors other than its provider's.
    let events: EventDispatcher?

    init(refreshing: UUID?, revalidatedKey: CacheKey?, boundAccount: String?, events: EventDispatcher?) {
        self.refreshing = refreshing
        self.revalidatedKey = revalidatedKey
        self.boundAccount = boundAccount
        self.events = events
    }
}
