import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension MockServer {
    /// A provider whose requests this server answers, and whose answers are wrapped in the app's `envelope`
    /// (see `EnvelopeFormat`): a failure inside a `200` throws the app's error, seen first by
    /// the retriers, and payloads decode from inside it. The other parameters are those of
    /// ``makeProvider(interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:cache:cachePolicy:now:errorMapper:monitors:sleep:)``.
    ///
    /// ```swift
    /// server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"E503"}"#, headers: ["Retry-After": "2"]))
    /// let provider = server.makeProvider(envelope: EnvelopeFormat(APIEnvelope.self), interceptor: MyRetrier())
    /// ```
    public func makeProvider(
        envelope: EnvelopeFormat,
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
        makeProvider(
            connectivity: .alwaysOnline, envelope: envelope, interceptor: interceptor, encoder: encoder, decoder: decoder,
            maximumAttempts: maximumAttempts, deadline: deadline, maximumResponseSize: maximumResponseSize, cache: cache, cachePolicy: cachePolicy,
            now: now, errorMapper: errorMapper, monitors: monitors, sleep: sleep)
    }
}
