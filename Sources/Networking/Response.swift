import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What one attempt received: the body, the HTTP response, and the request as it was sent
/// (after every adapter ran).
public struct Response: @unchecked Sendable {
    // @unchecked: URLRequest and HTTPURLResponse are immutable values here; the struct never mutates them.

    /// The response body (empty when there was none).
    public let data: Data
    /// The HTTP response: status, headers, URL after redirects.
    public let httpResponse: HTTPURLResponse
    /// The request as sent, after adaptation.
    public let request: URLRequest
    /// How the call got here: every attempt's status and the whole call's duration. On a response the
    /// provider returned, it covers the call; on one an ``EventMonitor`` or a retrier sees mid-call, or one
    /// made without one, it is this attempt alone with no duration.
    public var report: CallReport {
        storedReport ?? CallReport(statusCodes: [httpResponse.statusCode], duration: 0)
    }
    /// The call's report once the provider made it; `nil` on a mid-call response (built on demand then,
    /// so that no attempt pays for an array it is never asked for).
    var storedReport: CallReport?
    /// The HTTP status the app's envelope said this answer stands for (``EnvelopeFailure/standsForStatus``):
    /// e.g. `401` for a "token expired" code inside a `200`. Retriers judge by it when it is set (the
    /// ``AuthInterceptor`` and ``RetryPolicy`` do); ``statusCode`` stays the status the server sent.
    /// `nil` when the answer has no envelope, or its envelope names no status.
    public internal(set) var envelopeStatusCode: Int?
    /// The values its callers decoded, when it is the answer of an exchange that identical calls shared
    /// (see ``SharedDecodings``); `nil` for any other answer.
    var sharedDecodings: SharedDecodings?

    /// Creates a response. The provider makes these; tests, fakes and retriers may make their own.
    /// Without `report`, the report is this one attempt, with no duration.
    public init(data: Data, httpResponse: HTTPURLResponse, request: URLRequest, report: CallReport? = nil) {
        self.data = data
        self.httpResponse = httpResponse
        self.request = request
        self.storedReport = report
    }

    /// The HTTP status code.
    public var statusCode: Int { httpResponse.statusCode }

    /// The value of a response header, looked up case-insensitively.
    public func value(forHTTPHeaderField name: String) -> String? {
        httpResponse.value(forHTTPHeaderField: name)
    }
}

/// What a call took: its attempts and how long it ran. See ``Response/report``.
///
/// ```swift
/// let response = try await provider.response(UserAPI.user(id: 1))
/// print(response.report.attempts, response.report.statusCodes)   // 2 [Optional(401), Optional(200)]
/// ```
public struct CallReport: Sendable, Equatable {
    /// Every attempt's status code, in order; `nil` for an attempt that got no response (a dropped
    /// connection, a timeout) or was stopped before it did.
    public var statusCodes: [Int?]
    /// The whole call's duration in seconds, from building the request to the returned response
    /// (retries, their delays and a token refresh the call waited for included).
    public var duration: TimeInterval
    /// The redirects the call followed, in order, across its attempts (URLs redacted).
    public var redirects: [RedirectHop]
    /// How the provider's response cache took part: a ``CacheResult/hit`` (no attempt was made, so
    /// ``statusCodes`` is empty), ``CacheResult/revalidated``, ``CacheResult/miss`` or a stale answer; `nil`
    /// when the call did not use the cache.
    public var cache: CacheResult?
    /// How long, in seconds, the call waited for the network (see ``Connectivity``): included in
    /// ``duration``; 0 when it never waited.
    public var connectivityWait: TimeInterval = 0
    /// How long, in seconds, the call's requests waited for a free slot under the provider's
    /// ``Scheduling`` limits, across its attempts and redirects: included in ``duration``; 0 when a slot
    /// was always free.
    public var queueWait: TimeInterval = 0
    /// Whether the call joined an identical call already in flight and shared its exchange instead of
    /// sending one (see ``Scheduling/coalescesIdenticalCalls``): then ``statusCodes``, ``redirects``,
    /// ``cache`` and ``connectivityWait`` are that exchange's, and ``duration`` is this call's own.
    public var joinedExistingCall = false

    /// Creates a report.
    public init(statusCodes: [Int?], duration: TimeInterval, redirects: [RedirectHop] = [], cache: CacheResult? = nil) {
        self.statusCodes = statusCodes
        self.duration = duration
        self.redirects = redirects
        self.cache = cache
    }

    /// Creates a report of a call that waited `connectivityWait` seconds for the network.
    public init(
        statusCodes: [Int?], duration: TimeInterval, redirects: [RedirectHop] = [], cache: CacheResult? = nil, connectivityWait: TimeInterval
    ) {
        self.init(statusCodes: statusCodes, duration: duration, redirects: redirects, cache: cache)
        self.connectivityWait = connectivityWait
    }

    /// How many attempts the call made.
    public var attempts: Int { statusCodes.count }
}

extension Response: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The status, the URL (hidden query parameters replaced) and the body's size, e.g.
    /// `Response(200, https://api.example.com/v1/users/1, 87 bytes)`. Never a header value or the body.
    public var description: String {
        let url = httpResponse.url.map(Redactor().url) ?? "?"
        return "Response(\(statusCode), \(url), \(data.count) bytes)"
    }

    /// ``description`` followed by the response headers and the request, secrets replaced by a
    /// default ``Redactor``.
    public var debugDescription: String {
        let redactor = Redactor()
        return description + " headers: \(redactor.headerLines(responseHeaders)), request: \(RedactedRequest(request, redactor: redactor))"
    }

    /// What `dump` and debuggers show: status, URL, header names with values a default ``Redactor``
    /// hides replaced, the body's size and the request likewise redacted. No token or cookie appears.
    public var customMirror: Mirror {
        let redactor = Redactor()
        return Mirror(
            self,
            children: [
                "statusCode": statusCode,
                "url": httpResponse.url.map(redactor.url) ?? "",
                "headers": redactor.headerLines(responseHeaders),
                "body": "\(data.count) bytes",
                "request": RedactedRequest(request, redactor: redactor),
            ], displayStyle: .struct)
    }

    private var responseHeaders: [String: String] {
        httpResponse.allHeaderFields.reduce(into: [:]) { result, field in result["\(field.key)"] = "\(field.value)" }
    }
}

/// A request as `dump` and descriptions show it: method, URL and headers with secrets replaced, and
/// the body's size.
struct RedactedRequest: CustomStringConvertible, CustomReflectable {
    let method: String
    let url: String
    let headers: [String]
    let bodySize: Int

    init(_ request: URLRequest, redactor: Redactor) {
        method = request.httpMethod ?? "GET"
        url = request.url.map(redactor.url) ?? ""
        headers = redactor.headerLines(request.allHTTPHeaderFields ?? [:])
        bodySize = request.httpBody?.count ?? 0
    }

    var description: String {
        "\(method) \(url) \(headers), \(bodySize) bytes"
    }

    var customMirror: Mirror {
        Mirror(self, children: ["method": method, "url": url, "headers": headers, "body": "\(bodySize) bytes"], displayStyle: .struct)
    }
}
