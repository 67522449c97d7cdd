import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// The connectivity a provider consults unless it is given another: on Apple platforms the system's
    /// path monitor, one for every provider (`SystemConnectivity.shared`); elsewhere (Linux, which has no
    /// path monitor) ``AlwaysOnline``, so calls never wait. Pass a ``ManualConnectivity`` there to feed it.
    /// On watchOS also ``AlwaysOnline``: from watchOS 9 an ordinary app's path monitor stays unsatisfied
    /// although `URLSession` works (Apple TN3135), so every call would wait out its deadline.
    public static var defaultConnectivity: any Connectivity {
        #if canImport(Network) && !os(watchOS)
            SystemConnectivity.shared
        #else
            AlwaysOnline()
        #endif
    }

    /// Creates a provider that consults `connectivity` (see ``Connectivity``): while it says the device is
    /// offline, a call waits for the network within its deadline (spending no attempt, asking no retrier)
    /// or, with `offlineBehavior` ``OfflineBehavior/fail``, throws ``NetworkError/offline`` at once; an
    /// endpoint's own ``Endpoint/offlineBehavior`` wins. `envelope`: the envelope answers are wrapped in
    /// (see ``init(envelope:configuration:interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:redirectBehavior:allowsInsecureRedirects:cache:cachePolicy:usesSessionURLCache:now:serverTrust:errorMapper:monitors:sleep:)``),
    /// `nil` for none. The other parameters are those of
    /// ``init(configuration:interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:redirectBehavior:allowsInsecureRedirects:cache:cachePolicy:usesSessionURLCache:now:serverTrust:errorMapper:monitors:sleep:)``.
    ///
    /// ```swift
    /// let connectivity = ManualConnectivity()
    /// let provider = NetworkProvider(connectivity: connectivity, offlineBehavior: .fail)
    /// ```
    public convenience init(
        connectivity: any Connectivity,
        offlineBehavior: OfflineBehavior = .wait,
        envelope: EnvelopeFormat? = nil,
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
            wrappedIn: envelope.flatMap { $0.isUnwrapped ? nil : $0 }, configuration: configuration, interceptor: interceptor, encoder: encoder,
            decoder: decoder, maximumAttempts: maximumAttempts, deadline: deadline, maximumResponseSize: maximumResponseSize,
            redirectBehavior: redirectBehavior, allowsInsecureRedirects: allowsInsecureRedirects, cache: cache, cachePolicy: cachePolicy,
            usesSessionURLCache: usesSessionURLCache, now: now, serverTrust: serverTrust, errorMapper: errorMapper, monitors: monitors,
            sleep: sleep, connectivity: connectivity, offlineBehavior: offlineBehavior)
    }

    /// Whether an attempt of `request` that failed with `error` failed because the device is offline, so
    /// that it is sent again after the wait without spending an attempt or asking a retrier: a transport
    /// failure that an absent path causes while ``connectivity`` says offline. While it says online, each
    /// of these is an ordinary failure the retriers decide on (a connectivity that is never offline keeps
    /// the provider as it was, and a stale monitor cannot make a call re-send at once forever).
    ///
    /// A failure before the request could go out (not connected, host not found or not reachable, DNS
    /// failed, roaming or data off) always counts. A lost connection or a time-out can come after the
    /// server acted on the request, so it counts only for a request that is safe to repeat: an idempotent
    /// method (RFC 9110 §9.2.2) or one that carries an `Idempotency-Key`; for another (a `POST`) it is an
    /// ordinary failed attempt, which the retriers (``RetryPolicy``'s idempotency rule) decide on.
    func failedOffline(_ error: any Error, request: URLRequest) -> Bool {
        guard case .transportFailed(let failure)? = error as? NetworkError else { return false }
        switch failure.code {
        case .notConnectedToInternet, .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed, .internationalRoamingOff, .dataNotAllowed:
            return !connectivity.isOnline
        case .networkConnectionLost, .timedOut:
            return Self.isSafeToRepeat(request) && !connectivity.isOnline
        default:
            return false
        }
    }

    /// Whether sending `request` twice has the effect of sending it once: its method is idempotent
    /// (RFC 9110 §9.2.2) or it carries a non-empty `Idempotency-Key` header.
    static func isSafeToRepeat(_ request: URLRequest) -> Bool {
        HTTPMethod(rawValue: request.httpMethod ?? "GET").isIdempotent
            || request.value(forHTTPHeaderField: "Idempotency-Key")?.isEmpty == false
    }

    /// Whether a call offline answers from the cache instead of waiting: `use`'s stored entry is one its
    /// policy serves when the server cannot answer (RFC 5861 §4 `stale-if-error`, ``CachePolicy/staleIfError(upTo:)``).
    func answersOfflineFromCache(_ use: CacheUse?) -> Bool {
        use != nil && staleIfErrorResponse(after: Self.offlineFailure, lastStatus: nil, use: use) != nil
    }

    /// `error` as the cache's stale-if-error rules read it: ``NetworkError/offline`` is a transport failure.
    static func servedStaleAfter(_ error: any Error) -> any Error {
        (error as? NetworkError) == .offline ? offlineFailure : error
    }

    private static var offlineFailure: NetworkError { .transportFailed(URLError(.notConnectedToInternet)) }

    /// Waits until ``connectivity`` says online, within `deadline`, telling the monitors; adds the time
    /// waited to `waited`. Throws ``NetworkError/offline`` at once when `behavior` is
    /// ``OfflineBehavior/fail``, ``NetworkError/deadlineExceeded(seconds:)`` when the deadline passes
    /// first, ``NetworkError/cancelled`` when the task is cancelled.
    func waitForConnectivity(
        _ behavior: OfflineBehavior, deadline: Deadline, context: RequestContext, waited: inout TimeInterval
    ) async throws {
        guard behavior == .wait else { throw NetworkError.offline }
        let started = DispatchTime.now()
        events.send { $0.connectivityWaitDidStart(context: context) }
        var failure: (any Error)?
        do {
            try await waitUntilOnline(within: deadline)
        } catch {
            failure = error
        }
        let duration = started.secondsElapsed
        waited += duration
        events.send { [failure] in $0.connectivityWaitDidEnd(duration: duration, error: failure, context: context) }
        if let failure { throw failure }
    }

    /// Returns once online; throws when `deadline` passes first or the task is cancelled.
    private func waitUntilOnline(within deadline: Deadline) async throws {
        let connectivity = self.connectivity
        do {
            guard let remaining = deadline.remainingNanoseconds else {
                try await connectivity.waitUntilOnline()
                return
            }
            let cameBack = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await connectivity.waitUntilOnline()
                    return true
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: remaining)   // the real clock: the deadline is measured on it
                    return false
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
            if Task.isCancelled { throw NetworkError.cancelled }
            if !cameBack { throw deadline.exceeded }
        } catch let error as NetworkError {
            throw error
        } catch {
            throw Self.normalize(error)
        }
    }
}
