import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension MockServer {
    /// A provider whose requests this server answers, and which consults `connectivity` (see `Connectivity`):
    /// a `ManualConnectivity` takes it offline and back by hand. `offlineBehavior`: what its calls do offline,
    /// when their endpoint does not say. The other parameters are those of
    /// ``makeProvider(envelope:interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:cache:cachePolicy:now:errorMapper:monitors:sleep:)``.
    ///
    /// ```swift
    /// let connectivity = ManualConnectivity(isOnline: false)
    /// let provider = server.makeProvider(connectivity: connectivity)
    /// async let user = provider.response(UserAPI.user(id: 1))   // waits for the network
    /// connectivity.set(online: true)
    /// ```
    ///
    /// The test kit's other providers are always online (`AlwaysOnline`): a mock server needs no network.
    public func makeProvider(
        connectivity: any Connectivity,
        offlineBehavior: OfflineBehavior = .wait,
        envelope: EnvelopeFormat = .unwrapped,
        interceptor: (any RequestInterceptor)? = nil,
        encoder: JSONEncoder = JSONEncoder(),
        decoder: JSONDecoder = JSONDecoder(),
        maximumAttempts: Int = NetworkProvider.defaultMaximumAttempts,
        deadline: TimeInterval = NetworkProvider.defaultDeadline,
        maximumResponseSize: Int = NetworkProvider.defaultMaximumResponseSize,
        cache: (any ResponseCache)? = nil,
        cachePolicy: CachePolicy = .http,
        now: @escaping @Sendable () -> Date = { Date() },
        errorMapper: ErrorResponseMapper? = nil,
        monitors: [any EventMonitor] = [],
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = NetworkProvider.taskSleep
    ) -> NetworkProvider {
        // Captures the server strongly: a provider keeps its server alive (the server holds no provider).
        let router: any RequestAdapter = ClosureAdapter { [self] request, _ in route(request) }
        return NetworkProvider(
            connectivity: connectivity,
            offlineBehavior: offlineBehavior,
            envelope: envelope,
            configuration: makeConfiguration(),
            interceptor: Interceptor(
                adapters: [interceptor, router].compactMap { $0 },
                retriers: interceptor.map { [$0] } ?? []
            ),
            encoder: encoder,
            decoder: decoder,
            maximumAttempts: maximumAttempts,
            deadline: deadline,
            maximumResponseSize: maximumResponseSize,
            cache: cache,
            cachePolicy: cachePolicy,
            now: now,
            errorMapper: errorMapper,
            monitors: monitors,
            sleep: sleep
        )
    }
}
