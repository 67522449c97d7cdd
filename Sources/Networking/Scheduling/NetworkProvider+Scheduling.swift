import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// Creates a provider that schedules its calls by `scheduling` (see ``Scheduling``): at most so many
    /// requests in flight in all and per host, the others queued by ``Endpoint/priority``; identical
    /// concurrent `GET`/`HEAD` calls share one exchange unless turned off. The other parameters are those of
    /// ``init(connectivity:offlineBehavior:envelope:configuration:interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:redirectBehavior:allowsInsecureRedirects:cache:cachePolicy:usesSessionURLCache:now:serverTrust:errorMapper:monitors:sleep:)``.
    ///
    /// ```swift
    /// let provider = NetworkProvider(scheduling: Scheduling(maximumCallsPerHost: 4))
    /// ```
    public convenience init(
        scheduling: Scheduling,
        connectivity: any Connectivity = NetworkProvider.defaultConnectivity,
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
            sleep: sleep, connectivity: connectivity, offlineBehavior: offlineBehavior, scheduling: scheduling)
    }
}
