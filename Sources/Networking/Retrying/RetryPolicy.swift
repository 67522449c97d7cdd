import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries transient failures with exponential backoff and jitter, honouring `Retry-After`.
///
/// By default: at most 2 retries per call; only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE,
/// TRACE); statuses 408, 429, 500, 502, 503, 504; transport errors worth another try (timed out,
/// connection lost, cannot connect, DNS failure, not connected, ...); never cancellation.
///
/// The delay before retry *n* (0-based) is `scale × base^n`, capped at `maximumDelay`, then jittered
/// down by up to `jitter` of itself so that a fleet of clients does not retry in lockstep. A
/// `Retry-After` header (seconds or an HTTP date) replaces the backoff; when it asks for longer than
/// `maximumDelay`, the call is not retried earlier than the server asked but ends with
/// ``NetworkError/retryAfter(seconds:statusCode:)``, so the app can schedule its own retry. A malformed
/// one is ignored.
///
/// With an ``idempotencyKeyHeader`` (`"Idempotency-Key"`), calls of the other methods (`POST`, `PATCH`)
/// are retried too: each such call gets one random key in that header, the same on every attempt, so
/// the server can tell a retry from a new request. The policy must then adapt requests as well as retry
/// them (see ``adapt(_:for:)``).
///
/// ```swift
/// let provider = NetworkProvider(interceptor: Interceptor(adapters: [auth], retriers: [auth, RetryPolicy()]))
/// ```
public struct RetryPolicy: RequestInterceptor {
    /// The default methods retried: the idempotent ones.
    public static let defaultRetryableMethods: Set<HTTPMethod> = [.get, .head, .options, .put, .delete, .trace]
    /// The default statuses retried.
    public static let defaultRetryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// The default transport errors retried.
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected, .badServerResponse,
        .callIsActive, .cannotConnectToHost, .cannotFindHost, .cannotLoadFromNetwork, .dataNotAllowed,
        .dnsLookupFailed, .internationalRoamingOff, .networkConnectionLost, .notConnectedToInternet,
        .resourceUnavailable, .secureConnectionFailed, .timedOut,
    ]

    /// The most retries this policy grants one call.
    public var retryLimit: Int
    /// The backoff's base: the delay is multiplied by it on each retry.
    public var exponentialBackoffBase: Double
    /// The backoff's scale: the delay before the first retry, in seconds.
    public var exponentialBackoffScale: TimeInterval
    /// The longest delay: backoff is capped at it, and a longer `Retry-After` ends the call instead.
    public var maximumDelay: TimeInterval
    /// How much of each backoff delay may be taken off at random, from 0 (none) to 1 (full jitter).
    public var jitter: Double
    /// The methods retried.
    public var retryableMethods: Set<HTTPMethod>
    /// The statuses retried.
    public var retryableStatusCodes: Set<Int>
    /// The transport errors retried.
    public var retryableURLErrorCodes: Set<URLError.Code>
    /// The header that carries a call's idempotency key, or `nil` for none: with one, calls of methods
    /// that are not idempotent are retried by the same rules, each carrying one key on every attempt.
    public var idempotencyKeyHeader: String?
    private let random: @Sendable () -> Double
    private let now: @Sendable () -> Date

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - retryLimit: retries per call; default 2.
    ///   - exponentialBackoffBase: default 2.
    ///   - exponentialBackoffScale: seconds before the first retry; default 0.5.
    ///   - maximumDelay: the cap on any delay; default 30 s.
    ///   - jitter: the share of each backoff delay that is random; default 0.5 (the delay lies
    ///     between half and all of the computed backoff).
    ///   - retryableMethods: the methods retried after a failure; default the idempotent ones. A request of
    ///     another method is retried only when no connection was made (`cannotConnectToHost`, `cannotFindHost`,
    ///     `dnsLookupFailed`, `notConnectedToInternet`, if `retryableURLErrorCodes` has them): it never left.
    ///   - retryableStatusCodes: the statuses retried; default 408, 429 and the 5xx a retry can help.
    ///   - retryableURLErrorCodes: the transport errors retried; default timeouts and lost connections.
    ///   - idempotencyKeyHeader: the header an idempotency key goes in (`"Idempotency-Key"`, the IETF
    ///     draft's and Stripe's name), or `nil` (the default) for none. With one, a call of a method that
    ///     is not idempotent (`POST`, `PATCH`, ...) gets a random key (a UUID) in that header, the same on
    ///     every attempt and never reused by another call, unless the endpoint set the header itself; and
    ///     such a call is retried by the rules above, as long as the failed request carries the key.
    ///   - random: a number in `0...1`, for tests; default the system generator.
    ///   - now: the clock `Retry-After` dates are compared with, for tests.
    public init(
        retryLimit: Int = 2,
        exponentialBackoffBase: Double = 2,
        exponentialBackoffScale: TimeInterval = 0.5,
        maximumDelay: TimeInterval = 30,
        jitter: Double = 0.5,
        retryableMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableMethods,
        retryableStatusCodes: Set<Int> = RetryPolicy.defaultRetryableStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes,
        idempotencyKeyHeader: String? = nil,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.maximumDelay = maximumDelay
        self.jitter = min(max(jitter, 0), 1)
        self.retryableMethods = retryableMethods
        self.retryableStatusCodes = retryableStatusCodes
        self.retryableURLErrorCodes = retryableURLErrorCodes
        self.idempotencyKeyHeader = idempotencyKeyHeader
        self.random = random
        self.now = now
    }

    /// Retries a failure worth another try (see ``shouldRetry(_:response:)``) of a retryable method, or of a request carrying
    /// an idempotency key, or of any method when no connection was made (refused, no such host, no network: the request
    /// never left, RFC 9110 §9.2.2), up to ``retryLimit`` times per call: after `Retry-After` when the response has one, else after
    /// the backoff. A `Retry-After` longer than ``maximumDelay`` ends the call with ``NetworkError/retryAfter(seconds:statusCode:)``.
    public func retry(
        _ request: URLRequest,
        dueTo error: any Error,
        response: Response?,
        context: RequestContext
    ) async -> RetryResult {
        let retries = context[Self.noteKey] as? Int ?? 0
        guard retries < retryLimit,
            retryableMethods.contains(HTTPMethod(rawValue: request.httpMethod ?? "GET")) || carriesIdempotencyKey(request)
                || Self.wasNeverSent(error, response: response),
            shouldRetry(error, response: response)
        else { return .doNotRetry }
        context[Self.noteKey] = retries + 1
        if let response, let value = response.value(forHTTPHeaderField: "Retry-After"), let retryAfter = retryAfterDelay(value) {
            // Retrying earlier than the server asked would only be refused again: give up for now.
            guard retryAfter <= maximumDelay else {
                return .doNotRetryWithError(NetworkError.retryAfter(seconds: retryAfter, statusCode: response.envelopeStatusCode ?? response.statusCode))
            }
            return .retryWithDelay(retryAfter)
        }
        return .retryWithDelay(backoffDelay(forRetry: retries))
    }

    /// The transport errors that show no connection was made, so the request never left (RFC 9110 §9.2.2).
    static let neverSentURLErrorCodes: Set<URLError.Code> = [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet]

    /// Whether the attempt failed before any connection was made: its request was never applied.
    static func wasNeverSent(_ error: any Error, response: Response?) -> Bool {
        guard response == nil, let code = transportCode(of: error) else { return false }
        return neverSentURLErrorCodes.contains(code)
    }

    /// The `URLError` code of a transport failure, thrown as such or as ``NetworkError/transportFailed(_:)``.
    private static func transportCode(of error: any Error) -> URLError.Code? {
        switch error {
        case NetworkError.transportFailed(let urlError): return urlError.code
        case let urlError as URLError: return urlError.code
        default: return nil
        }
    }

    /// Whether `error` (with its response, if any) is worth another try: the response's status is one of
    /// ``retryableStatusCodes`` (the status its envelope's failure stands for, ``Response/envelopeStatusCode``,
    /// when there is one: an `E503` inside a `200` is a 503), or the error one of ``retryableURLErrorCodes``.
    public func shouldRetry(_ error: any Error, response: Response?) -> Bool {
        if let response { return retryableStatusCodes.contains(response.envelopeStatusCode ?? response.statusCode) }
        return Self.transportCode(of: error).map(retryableURLErrorCodes.contains) ?? false
    }

    /// The jittered backoff before retry `index` (0 for the first retry), in seconds.
    public func backoffDelay(forRetry index: Int) -> TimeInterval {
        let raw = exponentialBackoffScale * pow(exponentialBackoffBase, Double(index))
        let capped = raw.isFinite ? min(raw, maximumDelay) : maximumDelay
        return capped * (1 - jitter * min(max(random(), 0), 1))
    }

    /// The delay a `Retry-After` value asks for, in seconds, or `nil` when it is malformed. It may be
    /// longer than ``maximumDelay``: ``retry(_:dueTo:response:context:)`` then does not retry and throws
    /// ``NetworkError/retryAfter(seconds:statusCode:)``.
    ///
    /// Accepts only what RFC 9110 allows: delay-seconds (`"120"`, at most 10⁹) and an HTTP date
    /// (`"Wed, 21 Oct 2015 07:28:00 GMT"`, plus the obsolete RFC 850 and asctime forms), with optional
    /// spaces or tabs around it; a date in the past means no delay. Any other byte makes it malformed.
    ///
    /// A header sent twice reaches the app as one value joined with commas (`"120, 120"`, or two dates
    /// `"Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT"`): each value must be valid on
    /// its own, and when they differ the **longest** delay is used, since a retry earlier than any of
    /// them might be refused again. A single HTTP date is read whole first, so its own comma never splits it.
    public func retryAfterDelay(_ value: String) -> TimeInterval? {
        if let delay = singleRetryAfterDelay(Substring(value)) { return delay }
        // The field was sent more than once and combined: "120, 120". Dates have a comma of their own
        // ("Sun, 06 Nov ..."), so a piece that is not a value is joined with the next one and read again.
        let pieces = value.split(separator: ",", omittingEmptySubsequences: false)
        guard pieces.count > 1 else { return nil }
        var longest: TimeInterval?
        var index = 0
        while index < pieces.count {
            let delay: TimeInterval
            if let single = singleRetryAfterDelay(pieces[index]) {
                delay = single
                index += 1
            } else if index + 1 < pieces.count, let date = singleRetryAfterDelay(pieces[index] + "," + pieces[index + 1]) {
                delay = date
                index += 2
            } else {
                return nil
            }
            longest = max(longest ?? delay, delay)
        }
        return longest
    }

    /// One `Retry-After` value (delay-seconds or an HTTP date, with optional spaces or tabs around
    /// it), or `nil`.
    private func singleRetryAfterDelay(_ value: Substring) -> TimeInterval? {
        var bytes = value.utf8[...]
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes = bytes.dropLast() }
        guard !bytes.isEmpty else { return nil }
        if bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            let significant = bytes.drop { $0 == UInt8(ascii: "0") }
            guard significant.count <= 10 else { return 1e9 }
            var seconds: Double = 0
            for digit in significant { seconds = seconds * 10 + Double(digit - UInt8(ascii: "0")) }
            return min(seconds, 1e9)
        }
        guard let date = HTTPDate.parse(Substring(bytes), relativeTo: now()) else { return nil }
        return min(max(date.timeIntervalSince(now()), 0), 1e9)
    }

    private static let noteKey = "RetryPolicy.retries"
}
