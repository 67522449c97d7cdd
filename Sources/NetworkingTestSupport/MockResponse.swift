import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a ``MockServer`` answers to one request: a status, headers and body, or a transport error,
/// optionally after a delay.
///
/// ```swift
/// server.stub(.get, "/users/1", .json(User(id: 1, name: "Kim")))
/// server.stub(.get, "/flaky", .status(503), .status(503), .json(["ok": true]))
/// server.stub(.get, "/offline", .failure(URLError(.notConnectedToInternet)))
/// ```
public struct MockResponse: Sendable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers.
    public var headers: [String: String]
    /// The response body.
    public var body: Data
    /// When set, the request fails with this error instead of receiving a response (or, with
    /// ``chunks``, after them).
    public var error: URLError?
    /// Seconds to wait before answering; cancelling the request ends the wait. `.infinity` never
    /// answers (the call ends when it is cancelled, its timeout or its deadline passes); zero, negative
    /// and NaN do not wait.
    ///
    /// The request's timeout applies as URLSession applies it: when the handler and this delay take
    /// longer than the request's `timeoutInterval` (an endpoint's `Endpoint.timeout`, else
    /// the session's `timeoutIntervalForRequest`), the request fails with `URLError(.timedOut)` then.
    ///
    /// The clock keeps this delay and the chunks' delays, as a real server's pauses: a test run whose
    /// tasks keep the cooperative pool busy does not stretch them. The timeout counts from the stub's
    /// start (its handler runs in a task, which a busy pool may start late). A delay over a year never ends.
    public var delay: TimeInterval
    /// When not empty, the body is sent as these chunks instead of ``body``, each after its delay in
    /// seconds (a streamed response: Server-Sent Events, a slow download). Cancelling the request stops them.
    /// A delay of `.infinity` is a chunk that never comes; zero, negative and NaN do not wait. The
    /// request's timeout is an idle timeout here too: a chunk later than it after the previous one (or
    /// the head) fails the request with `URLError(.timedOut)`; a slow body whose chunks keep coming does not.
    public var chunks: [(data: Data, delay: TimeInterval)] = []
    /// How the request's body is read: `bytesPerChunk` bytes every `interval` seconds, each reported as
    /// upload progress (see ``MockURLProtocol``); `nil`, the default, reads it in 64 KiB chunks without
    /// pauses. Set by ``throttled(bytesPerChunk:every:)``.
    public var uploadThrottle: (bytesPerChunk: Int, interval: TimeInterval)?

    /// Creates a response.
    public init(statusCode: Int = 200, headers: [String: String] = [:], body: Data = Data(), delay: TimeInterval = 0) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.error = nil
        self.delay = delay
    }

    /// A response with this status, no body, and optional headers.
    public static func status(_ code: Int, headers: [String: String] = [:]) -> MockResponse {
        MockResponse(statusCode: code, headers: headers)
    }

    /// A JSON response encoding `value` with `encoder`, with `Content-Type: application/json` unless
    /// `headers` name another content type.
    ///
    /// ```swift
    /// let iso8601 = JSONEncoder()
    /// iso8601.dateEncodingStrategy = .iso8601
    /// server.stub(.get, "/v1/events/1", .json(event, encoder: iso8601))
    /// ```
    public static func json(
        _ value: some Encodable, statusCode: Int = 200, headers: [String: String] = [:], encoder: JSONEncoder = JSONEncoder()
    ) -> MockResponse {
        do {
            return MockResponse(statusCode: statusCode, headers: jsonHeaders(headers), body: try encoder.encode(value))
        } catch {
            // The test's own fixture cannot be encoded: a bug in the test, not data from a network.
            preconditionFailure("MockResponse.json: \(type(of: value)) could not be encoded: \(error)")
        }
    }

    /// A JSON response with a literal body, e.g. `#"{"status":400}"#`, with `Content-Type:
    /// application/json` unless `headers` name another content type.
    public static func json(raw: String, statusCode: Int = 200, headers: [String: String] = [:]) -> MockResponse {
        MockResponse(statusCode: statusCode, headers: jsonHeaders(headers), body: Data(raw.utf8))
    }

    /// `headers` with `Content-Type: application/json` added, unless they have a content type of any spelling.
    private static func jsonHeaders(_ headers: [String: String]) -> [String: String] {
        var headers = headers
        if !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
            headers["Content-Type"] = "application/json"
        }
        return headers
    }

    /// A transport failure: the request gets no HTTP response.
    public static func failure(_ error: URLError) -> MockResponse {
        var response = MockResponse()
        response.error = error
        return response
    }

    /// A `200` whose body arrives as `chunks`, `interval` seconds apart, with `headers`.
    ///
    /// ```swift
    /// server.stub(.get, "/events", .chunked(["data: one\n\n", "data: two\n\n"], interval: 0.05,
    ///                                      headers: ["Content-Type": "text/event-stream"]))
    /// ```
    public static func chunked(
        _ chunks: [String], interval: TimeInterval = 0, statusCode: Int = 200, headers: [String: String] = [:], failingWith error: URLError? = nil
    ) -> MockResponse {
        chunked(chunks.map { Data($0.utf8) }, interval: interval, statusCode: statusCode, headers: headers, failingWith: error)
    }

    /// A response whose body arrives as `chunks` of bytes, `interval` seconds apart; with `error`, the
    /// connection then fails with it instead of ending the body (a drop mid-stream).
    public static func chunked(
        _ chunks: [Data], interval: TimeInterval = 0, statusCode: Int = 200, headers: [String: String] = [:], failingWith error: URLError? = nil
    ) -> MockResponse {
        var response = MockResponse(statusCode: statusCode, headers: headers)
        response.chunks = chunks.map { ($0, interval) }
        response.error = error
        return response
    }

    /// This response, answered after `seconds` (`.infinity`: never, until the call is cancelled or its
    /// timeout or deadline passes).
    public func delayed(by seconds: TimeInterval) -> MockResponse {
        var copy = self
        copy.delay = seconds
        return copy
    }
}
