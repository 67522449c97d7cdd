import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
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

    /// The envelope every answer is wrapped in, unless an endpoint names its own (``Endpoint/envelope``);
    /// `nil` for none. See ``EnvelopeFormat``.
    public var envelope: EnvelopeFormat? { storedEnvelope }

    /// Creates a provider whose answers are wrapped in `envelope` (see ``EnvelopeFormat``): a failure it
    /// reports, inside a `200` or an error status, throws the app's error, seen first by the retriers and
    /// the ``AuthInterceptor``; payloads decode from inside it. The other parameters are those of
    /// ``init(configuration:interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:redirectBehavior:allowsInsecureRedirects:cache:cachePolicy:usesSessionURLCache:now:serverTrust:errorMapper:monitors:sleep:)``.
    ///
    /// ```swift
    /// let provider = NetworkProvider(envelope: EnvelopeFormat(APIEnvelope.self), interceptor: auth)
    /// let user = try await provider.request(UserAPI.me, as: User.self)   // the "data" of the envelope
    /// ```
    public convenience init(
        envelope: EnvelopeFormat,
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
            wrappedIn: envelope.isUnwrapped ? nil : envelope, configuration: configuration, interceptor: interceptor, encoder: encoder,
            decoder: decoder, maximumAttempts: maximumAttempts, deadline: deadline, maximumResponseSize: maximumResponseSize,
            redirectBehavior: redirectBehavior, allowsInsecureRedirects: allowsInsecureRedirects, cache: cache, cachePolicy: cachePolicy,
            usesSessionURLCache: usesSessionURLCache, now: now, serverTrust: serverTrust, errorMapper: errorMapper, monitors: monitors,
            sleep: sleep)
    }

    /// `request` as monitors, retriers and the app see it: without the ``routingHeaders``.
    func shown(_ request: URLRequest) -> URLRequest {
        routingHeaders.isEmpty ? request : HiddenHeaders.removing(routingHeaders, from: request)
    }

    /// A configuration's `httpAdditionalHeaders` as header fields; a name or value that would corrupt the
    /// wire (CR, LF, NUL, a name that is not a token) is left out, as URLSession would not send it either.
    static func fieldValues(of headers: [AnyHashable: Any]?) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in headers ?? [:] {
            let (name, value) = ("\(name)", "\(value)")
            if WireValidation.isToken(name), WireValidation.isFieldValue(value) { fields[name] = value }
        }
        return fields
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
