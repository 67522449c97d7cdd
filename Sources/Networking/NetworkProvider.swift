import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a response with an unacceptable status into the app's own error, or returns `nil` to throw
/// ``NetworkError/invalidStatusCode(_:)``. Real APIs put their error codes in the body.
public typealias ErrorResponseMapper = @Sendable (Response) -> (any Error)?

/// Sends endpoints through `URLSession` and runs every attempt through the interceptors:
/// build → adapt → send → validate → on error ask the retriers → retry or throw.
///
/// The provider owns its `URLSession` (made from the configuration you give it, with its own session
/// delegate) and invalidates it when released. It follows redirects itself, by the same rules on every
/// platform: see ``RedirectBehavior``.
///
/// ```swift
/// let provider = NetworkProvider(interceptor: auth, errorMapper: { response in
///     try? JSONDecoder().decode(APIError.self, from: response.data)
/// })
/// let user = try await provider.request(UserAPI.user(id: 1), as: User.self)
/// ```
public final class NetworkProvider: NetworkProviding {
    /// The session every request is sent through (see ``session``).
    let urlSession: URLSession
    /// The provider-wide interceptor; it runs before any per-call interceptor (adapt and retry).
    public let interceptor: (any RequestInterceptor)?
    /// ``interceptor`` when it names cache partitions (an ``AuthInterceptor``): cast once, not once per call.
    let partitioning: (any CachePartitioning)?
    /// The hard cap on attempts per call, which no retrier can exceed.
    public let maximumAttempts: Int
    /// The overall deadline of a call whose endpoint names none, in seconds (`.infinity` for none).
    public let deadline: TimeInterval
    /// The largest response body of a call whose endpoint names none, in bytes.
    public let maximumResponseSize: Int
    /// What a call whose endpoint names no ``Endpoint/redirectBehavior`` does with a redirect.
    public let redirectBehavior: RedirectBehavior
    /// Whether a redirect from https to http is followed (`false`: it fails with
    /// ``NetworkError/insecureRedirect(statusCode:)``).
    public let allowsInsecureRedirects: Bool
    /// Where responses are kept for reuse, or `nil` for no caching. See ``CachePolicy``.
    public let cache: (any ResponseCache)?
    /// How a call whose endpoint names no ``Endpoint/cachePolicy`` uses ``cache``.
    public let cachePolicy: CachePolicy
    /// The clock the cache's freshness is measured with.
    let now: @Sendable () -> Date
    /// The public keys pinned per host, checked on every connection to them (see ``ServerTrust``).
    public let serverTrust: ServerTrust
    /// The configuration's `httpAdditionalHeaders`, moved onto every request the provider builds (the
    /// endpoint's own headers win), so the redirect rules cover them: URLSession would add them to every
    /// hop, whatever its origin.
    let additionalHeaders: [String: String]
    private let encoder: JSONEncoder
    let decoder: JSONDecoder
    /// The envelope answers are wrapped in (see ``envelope``); `nil` for none.
    let storedEnvelope: EnvelopeFormat?
    let errorMapper: ErrorResponseMapper?
    let delegate: SessionDelegate
    private let callbackQueue = DispatchQueue(label: "Networking.SessionDelegate", qos: .userInitiated)
    let attemptWatch = AttemptWatch()
    /// The slots for requests in flight and the calls waiting for one, under ``scheduling``'s limits.
    let slots: CallSlots
    /// The cache entries being revalidated in the background (`stale-while-revalidate`), one at a time each.
    let backgroundRevalidations = BackgroundRevalidations()
    /// The identical `GET`/`HEAD` calls in flight, each group sharing one exchange (see ``Scheduling``).
    let callGroups = CallGroups()
    let events: EventDispatcher
    /// Header fields (lower-cased) that go to every redirect hop and that the provider never shows
    /// (``HiddenHeaders``): the routing headers of the URL protocols its session sends through (see
    /// ``HeaderRoutedURLProtocol``), read from its own configuration; empty in an app.
    let routingHeaders: Set<String>
    let sleep: @Sendable (TimeInterval) async throws -> Void
    /// Whether the device is online, consulted before each attempt and when one fails: while it is not,
    /// calls wait for the network instead of spending attempts (see ``Connectivity``).
    public let connectivity: any Connectivity
    /// What a call whose endpoint names no ``Endpoint/offlineBehavior`` does when the device is offline:
    /// ``OfflineBehavior/wait`` unless the provider was made with another.
    public let offlineBehavior: OfflineBehavior
    /// How many requests the provider sends at once and whether identical calls share an exchange.
    public let scheduling: Scheduling

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - configuration: the session configuration (copied); `.default` unless you need your own. Its
    ///     `httpAdditionalHeaders` are moved onto every request the provider builds (an endpoint's own
    ///     header of the same name wins), so the redirect rules keep them, too, from other origins; the
    ///     provider's session has none of them (see ``sessionConfiguration``).
    ///   - interceptor: the provider-wide interceptor, e.g. an ``AuthInterceptor``.
    ///   - encoder: encodes ``RequestBody/json(_:encoder:)`` bodies that name no encoder.
    ///   - decoder: decodes ``request(_:as:interceptor:)`` results.
    ///   - maximumAttempts: the hard cap on attempts per call, at least 1; default
    ///     ``defaultMaximumAttempts`` (6). When the last attempt the cap allows fails, the retriers are
    ///     not asked and the call throws ``NetworkError/tooManyAttempts(_:lastError:)`` (or, with a cap
    ///     of 1, the attempt's own error).
    ///   - deadline: the overall deadline of a call whose ``Endpoint/deadline`` is `nil`, in seconds;
    ///     ``defaultDeadline`` (120 s) by default, `.infinity` for none. When it passes, the call throws
    ///     ``NetworkError/deadlineExceeded(seconds:)``, whatever the server is doing.
    ///   - maximumResponseSize: the largest response body of a call whose
    ///     ``Endpoint/maximumResponseSize`` is `nil`, in bytes; ``defaultMaximumResponseSize`` (64 MiB)
    ///     by default. A larger one ends the call with ``NetworkError/responseTooLarge(limit:)``.
    ///   - redirectBehavior: what a call does with a redirect when its endpoint does not say;
    ///     ``RedirectBehavior/follow`` by default. The provider follows redirects itself, by the same
    ///     rules on every platform (see ``RedirectBehavior``).
    ///   - allowsInsecureRedirects: whether a redirect from https to http is followed; `false` by
    ///     default, so such a redirect fails with ``NetworkError/insecureRedirect(statusCode:)``.
    ///   - cache: where responses are kept to answer later calls, by the HTTP rules of a private cache
    ///     (RFC 9111) that the provider applies itself, the same on every platform; `nil` (the default)
    ///     for none. E.g. ``MemoryResponseCache`` or ``DiskResponseCache``; see ``CachePolicy``.
    ///   - cachePolicy: how a call uses `cache` when its endpoint does not say; ``CachePolicy/http``.
    ///   - usesSessionURLCache: whether the configuration's own `URLCache` stays in use; `false` by
    ///     default, so the session never stores or answers a response itself (its rules differ between
    ///     platforms). Pass `true` only to keep URLSession's caching instead of `cache`.
    ///   - now: the clock the cache measures freshness with; tests pass one they move by hand.
    ///   - serverTrust: the public keys to pin per host; ``ServerTrust/default`` (none) by default. Where
    ///     pins cannot be enforced (Linux), calls to pinned hosts fail before they are sent unless the
    ///     policy allows it: see ``ServerTrust``.
    ///   - errorMapper: turns an unacceptable response into the app's error; see ``ErrorResponseMapper``.
    ///   - monitors: observers of every call; see ``EventMonitor`` for when they are called.
    ///   - sleep: waits out a ``RetryResult/retryWithDelay(_:)``; by default `Task.sleep`. Tests pass one
    ///     that records the delay and returns at once. It must throw when the task is cancelled.
    public convenience init(
        configuration: URLSessionConfiguration = .default,
        interceptor: (any RequestInterceptor)? = nil,
        encoder: JSONEncoder = JSONEncoder(),
        decoder: JSONDecoder = JSONDecoder(),
        maximumAttempts: Int = NetworkProvider.defaultMaximumAttempts,
        deadline: TimeInterval = NetworkProvider.defaultDeadline,
        maximumResponseSize: Int = NetworkProvider.defaultMaximumResponseSize,
        redirectBehavior: RedirectBehavior = .follow,
        allowsInsecureRedirects: Bool = false,
        cache: (any ResponseCache)? = nil,
        cachePolicy: CachePolicy = .http,
        usesSessionURLCache: Bool = false,
        now: @escaping @Sendable () -> Date = { Date() },
        serverTrust: ServerTrust = .default,
        errorMapper: ErrorResponseMapper? = nil,
        monitors: [any EventMonitor] = [],
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = NetworkProvider.taskSleep
    ) {
        self.init(
            wrappedIn: nil, configuration: configuration, interceptor: interceptor, encoder: encoder, decoder: decoder,
            maximumAttempts: maximumAttempts, deadline: deadline, maximumResponseSize: maximumResponseSize, redirectBehavior: redirectBehavior,
            allowsInsecureRedirects: allowsInsecureRedirects, cache: cache, cachePolicy: cachePolicy, usesSessionURLCache: usesSessionURLCache,
            now: now, serverTrust: serverTrust, errorMapper: errorMapper, monitors: monitors, sleep: sleep)
    }

    /// The designated initializer: a provider whose answers are wrapped in `envelope` (`nil`: none); the
    /// public initializers name their parameters.
    init(
        wrappedIn envelope: EnvelopeFormat?,
        configuration: URLSessionConfiguration,
        interceptor: (any RequestInterceptor)?,
        encoder: JSONEncoder,
        decoder: JSONDecoder,
        maximumAttempts: Int,
        deadline: TimeInterval,
        maximumResponseSize: Int,
        redirectBehavior: RedirectBehavior,
        allowsInsecureRedirects: Bool,
        cache: (any ResponseCache)?,
        cachePolicy: CachePolicy,
        usesSessionURLCache: Bool,
        now: @escaping @Sendable () -> Date,
        serverTrust: ServerTrust,
        errorMapper: ErrorResponseMapper?,
        monitors: [any EventMonitor],
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void,
        connectivity: any Connectivity = NetworkProvider.defaultConnectivity,
        offlineBehavior: OfflineBehavior = .wait,
        scheduling: Scheduling = .default
    ) {
        self.scheduling = scheduling
        self.slots = CallSlots(scheduling)
        self.connectivity = connectivity
        self.offlineBehavior = offlineBehavior
        self.storedEnvelope = envelope
        self.delegate = SessionDelegate(serverTrust: serverTrust)
        // The delegate's callbacks run one at a time on a queue of their own, at a high QoS: the size
        // limit counts bytes there, and a starved queue lets bytes pile up before it can stop a transfer.
        // On Linux the queue also holds URLSession back while too many callbacks wait (see BackpressureQueue).
        let callbacks = SessionDelegateQueue.make(on: callbackQueue)
        let configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration   // the caller's stays as it is
        // Never fewer connections per host than requests the provider sends at once to one: the rest would
        // wait inside URLSession with their idle timeout running (see Docs/Limits.md).
        configuration.httpMaximumConnectionsPerHost = max(configuration.httpMaximumConnectionsPerHost, scheduling.maximumCallsPerHost)
        let additionalHeaders = Self.fieldValues(of: configuration.httpAdditionalHeaders)
        self.additionalHeaders = additionalHeaders
        configuration.httpAdditionalHeaders = nil
        if !usesSessionURLCache {
            configuration.urlCache = nil   // the provider's own cache decides, the same on every platform
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        }
        let routingHeaders = RoutingHeaders.names(in: configuration)
        self.routingHeaders = routingHeaders
        self.urlSession = URLSession(configuration: configuration, delegate: delegate, delegateQueue: callbacks)
        self.interceptor = interceptor
        self.partitioning = interceptor as? any CachePartitioning
        self.encoder = encoder
        self.decoder = decoder
        self.maximumAttempts = max(1, maximumAttempts)
        self.deadline = deadline
        self.maximumResponseSize = max(maximumResponseSize, 0)
        self.redirectBehavior = redirectBehavior
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.cache = cache
        self.cachePolicy = cachePolicy
        self.now = now
        if let cache, let partitioning = interceptor as? any CachePartitioning { partitioning.attach(cache) }
        var trust = serverTrust
        // The test kit's URL protocol answers every request that carries its routing header; a configuration
        // that sends through it alone and adds that header to all of them never reaches a TLS server (see
        // HeaderRoutedURLProtocol): a request that lost the header finds no protocol, and is not sent.
        trust.isAnsweredByTestKit =
            RoutingHeaders.sendsOnlyThroughRoutedProtocols(configuration)
            && additionalHeaders.keys.contains { routingHeaders.contains($0.lowercased()) }
        self.serverTrust = trust
        self.errorMapper = errorMapper
        self.events = EventDispatcher(monitors)
        self.sleep = sleep
        StaleTemporaryFiles.sweepMultipartOnce()   // a crashed process's spooled forms: once, in the background
    }

    deinit {
        urlSession.finishTasksAndInvalidate()
    }

    /// Sends `endpoint` and decodes the body as `type`, with the endpoint's decoder or, when it names none, the provider's.
    public func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> T {
        try decodePayload(try await sentResponse(endpoint, interceptor: interceptor), as: type, for: endpoint)
    }

    /// Sends `endpoint` and decodes the value at `keyPath` in its JSON body as `type`, with the endpoint's decoder or the
    /// provider's.
    public func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        atKeyPath keyPath: String,
        interceptor: (any RequestInterceptor)?
    ) async throws -> T {
        try decodePayload(try await sentResponse(endpoint, interceptor: interceptor), as: type, for: endpoint, atKeyPath: keyPath)
    }

    /// Sends `endpoint` through the pipeline (build, adapt, send, validate, retry) and returns the response it accepted.
    /// Identical concurrent `GET`/`HEAD` calls share one exchange, each caller keeping its own cancellation and
    /// deadline (see ``Scheduling/coalescesIdenticalCalls`` and ``CallReport/joinedExistingCall``).
    public func response(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> Response {
        try await sentResponse(endpoint, interceptor: interceptor)
    }

    /// ``response(_:interceptor:)``, inlined into it and into the `request` methods: the call enters
    /// (``enter(_:interceptor:into:)``: identical `GET`/`HEAD` calls share one exchange; a queued call waits
    /// there, in small frames), then its pipeline runs (``respond(_:interceptor:entry:)``). Inlined, no frame
    /// of its own — the response it returns is kept in its caller's — is held while a call waits in the queue.
    @inline(__always)
    func sentResponse(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        var entry = CallEntry.alone   // what the call settles as it enters
        try await enter(endpoint, interceptor: interceptor, into: &entry)
        return try await respond(endpoint, interceptor: interceptor, entry: &entry)
    }

    /// Returns once the monitors have been told every event the provider queued before this call: after
    /// `try await provider.response(…)` returned and this awaited, every event of that call (its
    /// `requestDidFinish` included) has been delivered.
    ///
    /// ```swift
    /// _ = try await provider.response(UserAPI.user(id: 1))
    /// await provider.waitForMonitors()
    /// #expect(recorder.finishedCalls == 1)
    /// ```
    public func waitForMonitors() async {
        await events.drain()
    }

    /// The response body decoded as `type` with `decoder` (an endpoint's), or else the provider's.
    ///
    /// A response with no body (see `Response.hasNoBody`) decodes as the type's
    /// ``EmptyBodyDecodable/emptyBodyValue`` (``EmptyResponse``, `nil` for an `Optional`), or fails saying so.
    func decode<T: Decodable>(_ response: Response, as type: T.Type, decoder: JSONDecoder?) throws -> T {
        if response.hasNoBody {
            if let value = (T.self as? any EmptyBodyDecodable.Type)?.emptyBodyValue as? T {
                return value
            }
            let context = DecodingError.Context(
                codingPath: [],
                debugDescription: "The response body was empty.",
                underlyingError: EmptyResponseBody(statusCode: response.statusCode))
            throw NetworkError.decodingFailed(type: Self.typeName(of: T.self), error: .dataCorrupted(context))
        }
        do {
            return try (decoder ?? self.decoder).decode(T.self, from: response.data)
        } catch let error as DecodingError {
            throw NetworkError.decodingFailed(type: Self.typeName(of: T.self), error: error)
        }
    }

    /// The name a decoding error gives `type`: what the caller asked for, also at a key path.
    private static func typeName<T>(of type: T.Type) -> String {
        (type as? any KeyPathDecodable.Type)?.decodedTypeName ?? String(describing: type)
    }

    /// Sends one call; `refreshing` names the ``AuthInterceptor`` whose token refresh this call is.
    func response(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?,
        refreshing: UUID?
    ) async throws -> Response {
        try await perform(endpoint, interceptor: interceptor, refreshing: refreshing, mode: TransferMode()).response
    }

    /// The request `endpoint` builds, with the configuration's additional headers it does not set itself.
    func builtRequestAndBody(for endpoint: some Endpoint) throws -> (request: URLRequest, body: RequestBody.Encoded?) {
        try endpoint.urlRequestAndBody(encoder: encoder, additionalHeaders: additionalHeaders)
    }

    /// The request `endpoint` makes and its encoded body without the session's additional headers: what an
    /// ``Outbox`` keeps of a mutation (the provider adds those headers again when it sends it).
    func snapshotRequestAndBody(for endpoint: some Endpoint) throws -> (request: URLRequest, body: RequestBody.Encoded?) {
        try endpoint.urlRequestAndBody(encoder: encoder)
    }
}
