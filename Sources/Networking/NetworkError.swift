import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every error the provider throws, in cases a caller can switch on.
///
/// Descriptions say what happened without header values, bodies or query strings, so they are safe
/// to log: a token never appears in one.
///
/// ```swift
/// do {
///     let user = try await provider.request(UserAPI.user(id: 1), as: User.self)
/// } catch NetworkError.invalidStatusCode(404) {
///     showNotFound()
/// } catch NetworkError.transportFailed(let error) where error.code == .notConnectedToInternet {
///     showOffline()
/// }
/// ```
///
/// New kinds of failure arrive as new cases in minor versions, so a `switch` over `NetworkError` needs
/// a `default:` clause (or match the cases you handle with `catch NetworkError.…` or `if case`): an
/// exhaustive `switch` without one is not covered by the package's compatibility promise.
public enum NetworkError: Error, Sendable {
    /// The endpoint's URL could not be built; the text names what was wrong.
    case invalidURL(String)
    /// The request was not sent because a part the app controls cannot go on the wire as it is: a
    /// method or header name that is not an HTTP token, a header value with CR, LF or NUL, a timeout
    /// that is not a positive number. Names the field, never its value.
    case invalidRequest(field: String, reason: String)
    /// The request body could not be encoded; carries the encoder's error.
    case encodingFailed(any Error)
    /// The request got no complete HTTP response: offline, timed out, TLS failure, or the connection lost before
    /// or while the body arrived (a body cut short is `.networkConnectionLost` on every platform), ...
    case transportFailed(URLError)
    /// The server answered with a status the endpoint does not accept (by default, anything outside 2xx).
    case invalidStatusCode(Int)
    /// The server redirected a request that has a body (in memory, a file or a form) to another origin
    /// (scheme, host or port) with a status that keeps the body (307 or 308, or a 301/302 of a method
    /// other than POST), so the redirect was not followed: the body never goes to another origin, on
    /// any platform. Carries the redirect's status code. A redirect to the same origin is followed.
    case redirectWouldForwardBody(statusCode: Int)
    /// The server redirected an https request to plain http, which would send the request (and the
    /// cookies and headers that go to its origin) unencrypted; it was not followed. Allow it with the
    /// provider's `allowsInsecureRedirects`. Carries the redirect's status code.
    case insecureRedirect(statusCode: Int)
    /// The response body could not be decoded as `type`: it is not a `type` (the description names the
    /// coding path, never a value), or the response has no body and `type` is not ``EmptyResponse``, an
    /// `Optional` or another ``EmptyBodyDecodable``. At a key path, `type` says which
    /// (`User at key path "data.user"`).
    case decodingFailed(type: String, error: DecodingError)
    /// The calling task was cancelled; the request was stopped and not retried.
    case cancelled
    /// The retriers asked for more attempts than the provider's hard cap allows; carries the cap and the
    /// error of the last attempt.
    case tooManyAttempts(Int, lastError: any Error)
    /// The user's session is over: the refresh token was rejected and the stored credential cleared.
    /// The app should ask the user to sign in again.
    case sessionExpired
    /// The call needs authentication but no credential is stored (the user has not signed in).
    case missingCredential
    /// More token refreshes happened in a short window than the interceptor allows: a server or clock
    /// bug, stopped instead of hammering the auth server. Carries the count and the window in seconds.
    case excessiveRefresh(count: Int, window: TimeInterval)
    /// The access token could not be refreshed for a reason other than a rejected refresh token (the
    /// auth server answered 404 or 5xx, was offline, or its answer did not decode): the call that
    /// needed the refresh fails with this, carrying the refresh's own error, instead of looking as if
    /// it had failed itself. The credential is kept, and a later call tries again.
    case refreshFailed(any Error)
    /// The server answered `statusCode` (usually 429 or 503) with a `Retry-After` longer than the
    /// ``RetryPolicy``'s maximum delay: the call was not retried earlier than the server asked. Carries
    /// the seconds the server asked for, so the app can retry later itself.
    case retryAfter(seconds: TimeInterval, statusCode: Int)
    /// The call did not finish within its overall deadline (``Endpoint/deadline``, or the provider's),
    /// whatever the server was doing: slow headers, a trickling body, endless interim responses, or
    /// retries and their delays. Carries the deadline in seconds.
    case deadlineExceeded(seconds: TimeInterval)
    /// The response body, or the length the server declared for it, is larger than the call allows
    /// (``Endpoint/maximumResponseSize``, or the provider's). Carries the limit in bytes.
    case responseTooLarge(limit: Int)
    /// A download could not be written to disk, or moved to its destination. Carries the file system's error.
    case fileWriteFailed(any Error)
    /// The call's ``CachePolicy/cacheOnly`` policy allows no request, and the provider's cache holds no
    /// entry for it (or the provider has no cache).
    case notCached
    /// The server's certificate chain, which the system trusts, has none of the public keys pinned for
    /// `host` (see ``ServerTrust``): the connection was refused before anything of the request was sent.
    /// Apple platforms only; not retried.
    case pinMismatch(host: String)
    /// The request was not sent: `host` has pins in force that cannot be enforced for it, because this
    /// platform cannot check pins (Linux; see ``ServerTrust/allowsUnenforcedPinning``) or because the
    /// request is not https. Checked before every attempt and every redirect hop; not retried.
    case unenforceablePins(host: String)
    /// The device is offline (its ``Connectivity`` says so) and the call's ``OfflineBehavior`` is
    /// ``OfflineBehavior/fail``: it started while offline, or an attempt failed because the device went
    /// offline, and it did not wait for the network.
    case offline
}

extension NetworkError: CustomStringConvertible, LocalizedError {
    /// What happened, in a sentence that never contains a header value, a body or a query string, so it is safe to log.
    public var description: String {
        switch self {
        case let .invalidURL(reason):
            return "Invalid URL: \(reason)."
        case let .invalidRequest(field, reason):
            return "The request was not sent: its \(field) \(reason)."
        case let .encodingFailed(error):
            return "The request body could not be encoded (\(type(of: error)))."
        case let .transportFailed(error):
            return "The request failed without a complete response: URLError \(Self.transportSummary(of: error))."
        case let .invalidStatusCode(code):
            return "The server answered with unacceptable status code \(code)."
        case let .redirectWouldForwardBody(code):
            return
                "The server redirected the request (status \(code)) to another origin; it was not followed, since that would have sent the request body there."
        case let .insecureRedirect(code):
            return "The server redirected the request (status \(code)) from https to http; it was not followed."
        case let .decodingFailed(type, error):
            return "The response could not be decoded as \(type): \(Self.summary(of: error))."
        case .cancelled:
            return "The request was cancelled."
        case let .tooManyAttempts(count, lastError):
            return "The request was given up after \(count) attempts; the last one failed with: \(Self.describe(lastError))"
        case .sessionExpired:
            return "The session has expired; the user must sign in again."
        case .missingCredential:
            return "The call needs authentication but no credential is stored."
        case let .excessiveRefresh(count, window):
            return "The access token was refreshed \(count) time\(count == 1 ? "" : "s") \(Self.span(window)); refreshing stopped."
        case let .refreshFailed(error):
            return "The access token could not be refreshed: \(Self.describe(error))"
        case let .responseTooLarge(limit):
            return "The response body is larger than the \(limit) bytes this call allows."
        case let .fileWriteFailed(error):
            return "The downloaded file could not be written: \(Self.describe(error))"
        case let .deadlineExceeded(seconds):
            return "The call did not finish within its deadline of \(Self.seconds(seconds)), retries included."
        case .notCached:
            return "The response is not in the cache, and the call's cache policy allows no request."
        case let .retryAfter(seconds, statusCode):
            return "The server answered \(statusCode) and asked to wait \(Self.seconds(seconds)) before retrying, longer than the retry policy waits."
        case let .pinMismatch(host):
            return "The certificate chain of \(host) has none of the public keys pinned for it; the request was not sent."
        case let .unenforceablePins(host):
            return "The request to \(host) was not sent: its pins cannot be enforced here (this platform cannot check them, or the request is not https)."
        case .offline:
            return "The device is offline, and the call was set not to wait for the network."
        }
    }

    /// The same text as `description`, so `localizedDescription` is safe to log too.
    public var errorDescription: String? { description }

    /// A decoding error's kind and coding path, without the debug text (which can quote values).
    static func summary(of error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "at the top level" : "at \(keys.joined(separator: "."))"
        }
        switch error {
        case let .typeMismatch(type, context): return "type mismatch for \(type) \(path(context))"
        case let .valueNotFound(type, context): return "missing value of \(type) \(path(context))"
        case let .keyNotFound(key, context): return "missing key \"\(key.stringValue)\" \(path(context))"
        case let .dataCorrupted(context):
            if let empty = context.underlyingError as? EmptyResponseBody {
                return "\(empty), which decodes only as EmptyResponse, an Optional or an EmptyBodyDecodable"
            }
            // JSONDecoder reports a body that is not JSON at all (an HTML page, a truncated or non-UTF-8 body) at the top
            // level, in these words on every platform (with the parser's error underneath on older Apple ones). The
            // text is only compared, never shown: a type's own debug text may quote a value.
            if context.codingPath.isEmpty,
                context.underlyingError != nil || context.debugDescription.hasPrefix("The given data was not valid JSON")
            {
                return "the body is not valid JSON"
            }
            return "data corrupted \(path(context))"
        @unknown default: return "unknown decoding error"
        }
    }

    /// "1.5 seconds", "30 seconds"; any value, even a negative or non-finite one a caller built, prints.
    private static func seconds(_ value: TimeInterval) -> String {
        guard value.isFinite, value < 1e9 else { return value > 0 ? "forever" : "an invalid time" }
        guard value >= 0 else { return "an invalid time" }
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) second\(rounded == 1 ? "" : "s")" : "\(rounded) seconds"
    }

    /// "within 30 seconds", or "since launch" for a window too long to count in seconds.
    private static func span(_ window: TimeInterval) -> String {
        guard window.isFinite, window < 1e9 else { return "since launch" }
        let seconds = Int(max(window, 0).rounded())
        return "within \(seconds) second\(seconds == 1 ? "" : "s")"
    }

    private static func describe(_ error: any Error) -> String {
        (error as? NetworkError)?.description ?? "\(type(of: error))"
    }
}
