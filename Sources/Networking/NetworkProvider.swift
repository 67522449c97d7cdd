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
    /// The default hard cap on attempts per call (the first attempt plus five retries).
    public static let defaultMaximumAttempts = 6
    /// The default overall deadline of a call, in seconds: 120. It covers every attempt, retry delay
    /// and redirect of the call; see ``Endpoint/deadline``.
    public static let defaultDeadline: TimeInterval = 120
    /// The default largest response body of a call, in bytes: 64 MiB. See ``Endpoint/maximumResponseSize``.
    public static let defaultMaximumResponseSize = 64 * 1_024 * 1_024

    /// The session every request is sent through. Its configuration is a copy of the one you gave
    /// **without** `httpAdditionalHeaders` (the provider adds them to each request it builds, so that a
    /// redirect to another origin can leave them off) and, unless `usesSessionURLCache`, without a
    /// `URLCache`. A task you start on it yourself bypasses the provider: no interceptors, no additional
    /// headers, no redirects followed (its delegate refuses them all), no deadline or size limit.
    @available(
        *, deprecated,
        message: "Send through the provider; read the configuration it sends with from sessionConfiguration"
    )
    public var session: URLSession { urlSession }

    /// A copy of the configuration the provider sends with: yours, as the provider applies it. Its
    /// `httpAdditionalHeaders` are the header fields the provider adds to each request it builds (the
    /// endpoint's own win; a redirect to another origin leaves them off, see the Redirects guide), not
    /// what its `URLSession` adds; its `urlCache` is `nil` unless the provider was made with
    /// `usesSessionURLCache: true`. Changing the copy changes nothing.
    public var sessionConfiguration: URLSessionConfiguration {
        let configuration = urlSession.configuration
        let copy = (configuration.copy() as? URLSessionConfiguration) ?? configuration
        copy.httpAdditionalHeaders = additionalHeaders.isEmpty ? nil : additionalHeaders
        return copy
    }

    /// The session every request is sent through (see ``session``).
    let urlSession: URLSession
    /// The provider-wide interceptor; it runs before any per-call interceptor (adapt and retry).
    public let interceptor: (any RequestInterceptor)?
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
    private let additionalHeaders: [String: String]
    private let encoder: JSONEncoder
    private let decoder: JSONDecoder
    private let errorMapper: ErrorResponseMapper?
    private let delegate: SessionDelegate
    private let callbackQueue = DispatchQueue(label: "Networking.SessionDelegate", qos: .userInitiated)
    private let attemptWatch = AttemptWatch()
    let events: EventDispatcher
    /// Header fields (lower-cased) that go to every redirect hop and that the provider never shows
    /// (``HiddenHeaders``): the routing headers of the URL protocols its session sends through (see
    /// ``HeaderRoutedURLProtocol``), read from its own configuration; empty in an app.
    let routingHeaders: Set<String>
    private let sleep: @Sendable (TimeInterval) async throws -> Void

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
    public init(
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
        self.delegate = SessionDelegate(serverTrust: serverTrust)
        // The delegate's callbacks run one at a time on a queue of their own, at a high QoS: the size
        // limit counts bytes there, and a starved queue lets bytes pile up before it can stop a transfer.
        // On Linux the queue also holds URLSession back while too many callbacks wait (see BackpressureQueue).
        let callbacks = SessionDelegateQueue.make(on: callbackQueue)
        let configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration   // the caller's stays as it is
        let additionalHeaders = Self.fieldValues(of: configuration.httpAdditionalHeaders)
        self.additionalHeaders = additionalHeaders
        configuration.httpAdditionalHeaders = nil
        if !usesSessionURLCache {
            configuration.urlCache = nil   // the provider's own cache decides, the same on every platform
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        }
        self.routingHeaders = RoutingHeaders.names(in: configuration)
        self.urlSession = URLSession(configuration: configuration, delegate: delegate, delegateQueue: callbacks)
        self.interceptor = interceptor
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
        // that adds that header to all of them never reaches a TLS server (see HeaderRoutedURLProtocol).
        let routing = RoutingHeaders.names(in: configuration)
        trust.isAnsweredByTestKit = additionalHeaders.keys.contains { routing.contains($0.lowercased()) }
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
        try decode(try await response(endpoint, interceptor: interceptor), as: type, decoder: endpoint.decoder)
    }

    /// Sends `endpoint` and decodes the value at `keyPath` in its JSON body as `type`, with the endpoint's decoder or the
    /// provider's.
    public func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        atKeyPath keyPath: String,
        interceptor: (any RequestInterceptor)?
    ) async throws -> T {
        let response = try await response(endpoint, interceptor: interceptor)
        return try DecodingKeyPath.$current.withValue(DecodingKeyPath(keyPath)) {   // only while decoding, never while sending
            try decode(response, as: AtKeyPath<T>.self, decoder: endpoint.decoder).value
        }
    }

    /// Sends `endpoint` through the pipeline (build, adapt, send, validate, retry) and returns the response it accepted.
    public func response(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> Response {
        try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: TransferMode()).response
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

    /// Sends one call, its body handled as `mode` says: the pipeline every public call goes through.
    func perform(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?,
        refreshing: UUID?,
        mode: TransferMode
    ) async throws -> (response: Response, delivered: DeliveredBody?) {
        let started = DispatchTime.now()
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: refreshing)
        var sent: URLRequest?
        var statuses: [Int?] = []   // one per attempt: its status, or nil when none came
        var hops: [RedirectHop] = []
        var spooled: URL?
        var cacheUse: CacheUse?
        defer { if let spooled { try? FileManager.default.removeItem(at: spooled) } }   // our temporary copy; nothing to report
        do {
            let deadline = try Deadline(seconds: endpoint.deadline ?? self.deadline)
            var (built, body) = try builtRequestAndBody(for: endpoint)
            var mode = mode
            switch body {
            case .file(let file, _)?:
                mode.bodyFile = file
            case .spooled(let form)?:
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("networking-\(UUID().uuidString).multipart")
                spooled = file
                let (contentType, length) = try await form.spool(to: file)
                built.setHeaderFields(["Content-Type": contentType, "Content-Length": String(length)])   // the boundary always wins over an endpoint's type
                mode.bodyFile = file
            case .inline?, nil:
                break
            }
            sent = built
            if !events.isEmpty { events.send { [built] in $0.requestDidBuild(built, context: context) } }
            let chain = chain(with: interceptor)
            var request = built
            if cache != nil || (mode.cachePolicy ?? endpoint.cachePolicy ?? cachePolicy).kind == .cacheOnly || HTTPCaching.onlyIfCached(built) {
                switch try await consultCache(built, for: endpoint, chain: chain, ownInterceptor: interceptor != nil, context: context, mode: mode) {
                case .answer(let response, let result, let key):
                    let report = CallReport(statusCodes: [], duration: started.secondsElapsed, cache: result)
                    return (answered(response, report: report, key: key, request: built, context: context), nil)
                case .send(let conditional, let use):
                    (request, cacheUse) = (conditional, use)
                }
            }
            var (response, delivered): (Response, DeliveredBody?)
            do {
                (response, delivered) = try await run(
                    request, for: endpoint, context: context, chain: chain, deadline: deadline, mode: mode, cacheUse: cacheUse,
                    sent: &sent, statuses: &statuses, hops: &hops)
            } catch  where cacheUse?.revalidates == true && statuses.last == .some(304) {
                // A 304 about another representation than the stored one: ask again, without conditions.
                if let use = cacheUse { await use.cache.removeResponse(for: use.key) }
                cacheUse?.entry = nil
                cacheUse?.revalidates = false
                (response, delivered) = try await run(
                    built, for: endpoint, context: context, chain: chain, deadline: deadline, mode: mode, cacheUse: cacheUse,
                    sent: &sent, statuses: &statuses, hops: &hops)
            }
            var cacheResult: CacheResult?
            if let use = cacheUse {
                cacheResult = await updateCache(
                    // A 304 the endpoint accepts as it is (it names another ETag) is no revalidation: the entry goes.
                    with: response, use: use, revalidated: use.revalidates && statuses.last == .some(304) && response.statusCode != 304,
                    redirected: !hops.isEmpty)
                if !events.isEmpty, let cacheResult { events.send { $0.cacheDidAnswer(cacheResult, key: use.key, context: context) } }
            } else if cache != nil {
                await invalidateCache(after: response, built: built, chain: chain, context: context)
            }
            let duration = started.secondsElapsed
            response.storedReport = CallReport(statusCodes: statuses, duration: duration, redirects: hops, cache: cacheResult)
            if !events.isEmpty {
                let (last, count, finished) = (shown(sent ?? built), statuses.count, response)
                events.send { $0.requestDidFinish(last, result: .success(finished), attempts: count, duration: duration, context: context) }
            }
            if mode.streams, !events.isEmpty { Self.reportStreamEnd(of: delivered, response: response, to: events, context: context) }
            return (response, delivered)
        } catch {
            if let use = cacheUse, let stale = staleIfErrorResponse(after: error, lastStatus: statuses.last ?? nil, use: use) {
                let report = CallReport(statusCodes: statuses, duration: started.secondsElapsed, redirects: hops, cache: .staleIfError)
                return (answered(stale, report: report, key: use.key, request: sent ?? use.built, context: context), nil)
            }
            if !events.isEmpty, let sent {
                let (last, count, duration) = (shown(sent), statuses.count, started.secondsElapsed)
                events.send { $0.requestDidFinish(last, result: .failure(error), attempts: count, duration: duration, context: context) }
            }
            throw error
        }
    }

    /// The request `endpoint` builds, with the configuration's additional headers it does not set itself.
    func builtRequestAndBody(for endpoint: some Endpoint) throws -> (request: URLRequest, body: RequestBody.Encoded?) {
        try endpoint.urlRequestAndBody(encoder: encoder, additionalHeaders: additionalHeaders)
    }

    /// The attempt loop: adapt → send → validate → on error ask the retriers → retry or throw.
    private func run(
        _ built: URLRequest,
        for endpoint: some Endpoint,
        context: RequestContext,
        chain: (any RequestInterceptor)?,
        deadline: Deadline,
        mode: TransferMode,
        cacheUse: CacheUse?,
        sent: inout URLRequest?,
        statuses: inout [Int?],
        hops: inout [RedirectHop]
    ) async throws -> (response: Response, delivered: DeliveredBody?) {
        while true {
            statuses.append(nil)
            let attempts = statuses.count
            if Task.isCancelled { throw NetworkError.cancelled }
            if deadline.hasPassed { throw deadline.exceeded }
            var request = built
            var response: Response?
            do {
                if let chain {
                    request = try await chain.adapt(built, for: context)
                    if !events.isEmpty { events.send { [request = shown(request)] in $0.requestDidAdapt(request, context: context) } }
                }
                sent = request
                if chain != nil {
                    try WireValidation.check(request)   // the endpoint's own parts were checked when built
                    if deadline.hasPassed { throw deadline.exceeded }   // the interceptors may have waited (a refresh)
                }
                if !events.isEmpty { events.send { [request = shown(request)] in $0.taskDidStart(request, context: context) } }
                let taskStarted = DispatchTime.now()
                let limit = endpoint.maximumResponseSize ?? maximumResponseSize
                let (data, httpResponse, delivered, last) = try await send(
                    request, builtAs: chain == nil ? nil : built, for: endpoint, context: context, deadline: deadline,
                    limits: (delivery: mode.sizeLimit ?? limit, gathered: limit), mode: mode, attempt: attempts, hops: &hops)
                sent = last
                let arrived = Response(data: data, httpResponse: httpResponse, request: shown(last))
                let received: Response
                if httpResponse.statusCode == 304, let use = cacheUse, let stored = revalidatedResponse(httpResponse, request: shown(last), use: use) {
                    received = stored   // the stored body, its headers updated: validated and handed on as the answer
                } else {
                    received = arrived
                }
                response = received
                statuses[statuses.count - 1] = httpResponse.statusCode
                if !events.isEmpty {
                    let duration = taskStarted.secondsElapsed
                    events.send { $0.responseDidArrive(arrived, duration: duration, context: context) }
                }
                let validated = try validate(received, for: endpoint, context: context)
                RefreshRun.current?.record(status: nil, of: context)
                return (validated, delivered)
            } catch {
                RefreshRun.current?.record(
                    status: response.map { endpoint.acceptableStatusCodes.contains($0.statusCode) ? nil : $0.statusCode } ?? nil,
                    of: context)
                let error = Self.normalize(error)
                if let refused = ServerTrustRefusal.endingTheCall(error) { throw refused }   // the server's chain: no retrier asked
                if mode.resumption?.restartsAfterRefusal() == true, attempts < maximumAttempts {
                    context.recordRetry()   // a refused range: the download starts again from its first byte, unasked
                    continue
                }
                switch error {
                case NetworkError.cancelled, NetworkError.invalidRequest, NetworkError.deadlineExceeded, NetworkError.responseTooLarge,
                    NetworkError.fileWriteFailed, NetworkError.encodingFailed, NetworkError.pinMismatch, NetworkError.unenforceablePins,
                    NetworkError.refreshFailed(NetworkError.pinMismatch), NetworkError.refreshFailed(NetworkError.unenforceablePins):
                    throw error   // never worth another attempt (a refresh that met a refused chain included)
                default: break
                }
                guard let chain else { throw error }
                // The cap allows no other attempt: the retriers are not asked, so none starts work
                // (such as a token refresh) whose result would be thrown away.
                guard attempts < maximumAttempts else {
                    throw attempts > 1 ? NetworkError.tooManyAttempts(attempts, lastError: error) : error
                }
                let decision = await chain.retry(shown(request), dueTo: error, response: response, context: context)
                events.send { [attempts] in $0.retryDidDecide(decision, attempt: attempts, error: error, context: context) }
                if Task.isCancelled { throw NetworkError.cancelled }
                switch decision {
                case .doNotRetry:
                    throw error
                case .doNotRetryWithError(let replacement):
                    throw Self.normalize(replacement)
                case .retry:
                    break
                case .retryWithDelay(let seconds):
                    guard deadline.allows(delay: seconds) else { throw deadline.exceeded }
                    if seconds > 0 {
                        do { try await sleep(seconds) } catch { throw NetworkError.cancelled }
                    }
                }
                context.recordRetry()
            }
        }
    }

    /// `request` as monitors, retriers and the app see it: without the ``routingHeaders``.
    func shown(_ request: URLRequest) -> URLRequest {
        routingHeaders.isEmpty ? request : HiddenHeaders.removing(routingHeaders, from: request)
    }

    /// The provider's interceptor followed by the call's, or whichever exists.
    func chain(with callInterceptor: (any RequestInterceptor)?) -> (any RequestInterceptor)? {
        switch (interceptor, callInterceptor) {
        case let (provider?, call?): return Interceptor(interceptors: [provider, call])
        case let (provider?, nil): return provider
        case let (nil, call?): return call
        case (nil, nil): return nil
        }
    }

    private func validate(_ response: Response, for endpoint: some Endpoint, context: RequestContext) throws -> Response {
        guard endpoint.acceptableStatusCodes.contains(response.statusCode) else {
            let error = errorMapper?(response) ?? NetworkError.invalidStatusCode(response.statusCode)
            events.send { $0.validationDidFail(response, error: error, context: context) }
            throw error
        }
        return response
    }

    /// A configuration's `httpAdditionalHeaders` as header fields; a name or value that would corrupt the
    /// wire (CR, LF, NUL, a name that is not a token) is left out, as URLSession would not send it either.
    private static func fieldValues(of headers: [AnyHashable: Any]?) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in headers ?? [:] {
            let (name, value) = ("\(name)", "\(value)")
            if WireValidation.isToken(name), WireValidation.isFieldValue(value) { fields[name] = value }
        }
        return fields
    }

    /// One `URLSessionTask`, driven by the session delegate (see ``DelegateTransfer``): the body (gathered,
    /// written to a download's file, or streamed) and the response, which may be a redirect (URLSession
    /// follows none). A streamed body is returned as soon as an accepted response arrives; the deadline
    /// then no longer applies to it, its reader owns it.
    ///
    /// Every attempt goes this way, plain requests included: only the delegate's callbacks let the size
    /// limit stop a body of undeclared length (chunked, or decompressed from gzip) while it arrives. On
    /// Linux it costs more instructions than a completion handler (see Docs/Performance.md).
    func transfer(
        _ request: URLRequest,
        context: RequestContext,
        deadline: Deadline,
        limits: (delivery: Int, gathered: Int),
        mode: TransferMode,
        followsRedirects: Bool
    ) async throws -> (Data, HTTPURLResponse, DeliveredBody?) {
        let handle = TaskHandle()
        let attemptWatch = self.attemptWatch
        attemptWatch.watch(handle, until: deadline.expiry)
        defer { attemptWatch.unwatch(handle) }
        let delegate = self.delegate
        let request = mode.resumption?.prepared(request) ?? request   // a download that resumes asks for the rest, on every hop
        let download = mode.resumption?.file
        let delivery: DelegateTransfer.Delivery = download.map { .file($0) } ?? (mode.streams ? .stream : .buffer)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Data, HTTPURLResponse, DeliveredBody?), any Error>) in
                var onStream: (@Sendable (HTTPURLResponse, BodyChannel) -> Void)?
                if mode.streams {
                    onStream = { response, channel in
                        attemptWatch.unwatch(handle)   // the deadline stops here: a tick must not cancel the stream handed out
                        continuation.resume(returning: (Data(), response, DeliveredBody.stream(channel)))
                    }
                }
                let transfer = DelegateTransfer(
                    delivery: delivery, acceptable: mode.acceptable, followsRedirects: followsRedirects, deliveryLimit: limits.delivery,
                    gatherLimit: limits.gathered, request: request,
                    progress: mode.progress, uploadSize: mode.progress == nil ? 0 : Self.uploadSize(of: request, from: mode.bodyFile),
                    handle: handle, resumption: mode.resumption, onStream: onStream,
                    onComplete: { data, response, error, state, wroteFile in
                        switch Self.outcome(data: data, response: response, error: error, state: state, handle: handle, deadline: deadline) {
                        case .failure(let failure):
                            continuation.resume(throwing: failure)
                        case .success(let (body, http)):
                            // A download's file exists only when the body went to it: not for a redirect or any other
                            // status it did not accept, nor for a cancelled challenge's 401 (its file was removed).
                            let delivered = wroteFile ? download.map { DeliveredBody.file($0) } : nil
                            continuation.resume(returning: (body, http, delivered))
                        }
                    })
                let task: URLSessionTask
                if let file = mode.bodyFile {
                    task = urlSession.uploadTask(with: request, fromFile: file)
                    task.taskDescription = Self.bodyFileTaskDescriptionPrefix + file.path
                } else {
                    task = urlSession.dataTask(with: request)
                }
                delegate.register(transfer, for: task, context: context)
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
    }

    /// How the `taskDescription` of a task that sends its body from a file begins; the file's path
    /// follows. For URL protocols such as `MockURLProtocol`, which on Linux are not given an upload
    /// task's body (and where `URLProtocol.setProperty` does not survive into the task).
    package static let bodyFileTaskDescriptionPrefix = "networking-body-file:"

    /// The size of the body `request` sends (from `file` when given), or 0 when unknown.
    private static func uploadSize(of request: URLRequest, from file: URL?) -> Int64 {
        if file != nil { return request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) } ?? 0 }
        return Int64(request.httpBody?.count ?? 0)
    }

    /// What a finished task means for the attempt: its body and response, or the error to throw.
    static func outcome(
        data: Data?, response: URLResponse?, error: (any Error)?, state: SessionDelegate.TaskState?,
        handle: TaskHandle, deadline: Deadline
    ) -> Result<(Data, HTTPURLResponse), any Error> {
        if let error {
            if error is NetworkError { return .failure(error) }   // the transfer's own verdict: too large, a file not written
            if let refused = state?.serverTrustFailure { return .failure(ServerTrustRefusal(error: refused)) }   // never retried
            let challenged = (error as? URLError)?.code == .cancelled ? state?.challengedResponse : nil
            switch (handle.stop, challenged) {
            case (.expired?, _):
                return .failure(deadline.exceeded)
            case (nil, let challenged?):
                // A cancelled challenge (Linux): the 401 is the answer, with the body that came before it.
                return .success((data ?? Data(), challenged))
            case (.cancelled?, _), (nil, nil):
                return .failure(error)
            }
        }
        guard let httpResponse = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
        return .success((data ?? Data(), httpResponse))
    }

    /// Whether a response to `request` declares the length of a body it sends: not for a HEAD, nor for a
    /// conditional request, whose 304 may declare the length of a body it does not send.
    static func declaresItsBody(_ request: URLRequest) -> Bool {
        guard request.httpMethod != "HEAD" else { return false }
        for name in ["If-None-Match", "If-Modified-Since", "If-Range", "If-Match", "If-Unmodified-Since"]
        where request.value(forHTTPHeaderField: name) != nil {
            return false
        }
        return true
    }

    /// Maps what URLSession and Swift concurrency throw to ``NetworkError`` where one fits.
    static func normalize(_ error: any Error) -> any Error {
        if error is CancellationError || Task.isCancelled { return NetworkError.cancelled }
        if let urlError = error as? URLError {
            return urlError.code == .cancelled ? NetworkError.cancelled : NetworkError.transportFailed(urlError)
        }
        return error
    }

    /// The default `sleep`: `Task.sleep`, which throws when the task is cancelled. A delay that is
    /// negative, zero or not a number does not wait; an infinite or longer one waits a day.
    public static let taskSleep: @Sendable (TimeInterval) async throws -> Void = { seconds in
        try await Task.sleep(nanoseconds: nanoseconds(forDelay: seconds))
    }

    /// `seconds` as nanoseconds for `Task.sleep`, from 0 to a day: never traps, whatever the value.
    static func nanoseconds(forDelay seconds: TimeInterval) -> UInt64 {
        guard seconds > 0 else { return 0 }   // also NaN
        return UInt64(min(seconds, 86_400) * 1_000_000_000)
    }
}

extension DispatchTime {
    /// Seconds from this time until now.
    var secondsElapsed: TimeInterval {
        Double(DispatchTime.now().uptimeNanoseconds - uptimeNanoseconds) / 1_000_000_000
    }
}
