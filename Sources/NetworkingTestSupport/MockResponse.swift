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
    /// answers (the call ends when it is cancelled or its deadline passes); zero, negative and NaN do not wait.
    public var delay: TimeInterval
    /// When not empty, the body is sent as these chunks instead of ``body``, each after its delay in
    /// seconds (a streamed response: Server-Sent Events, a slow download). Cancelling the request stops them.
    /// A delay of `.infinity` is a chunk that never comes; zero, negative and NaN do not wait.
    public var chunks: [(data: Data, delay: TimeInterval)] = []

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

    /// A JSON response encoding `value`, with `Content-Type: application/json`.
    public static func json(_ value: some Encodable, statusCode: Int = 200, headers: [String: String] = [:]) -> MockResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        do {
            return MockResponse(statusCode: statusCode, headers: headers, body: try JSONEncoder().encode(value))
        } catch {
            // The test's own fixture cannot be encoded: a bug in the test, not data from a network.
            preconditionFailure("MockResponse.json: \(type(of: value)) could not be encoded: \(error)")
        }
    }

    /// A JSON response with a literal body, e.g. `#"{"status":400}"#`.
    public static func json(raw: String, statusCode: Int = 200) -> MockResponse {
        MockResponse(statusCode: statusCode, headers: ["Content-Type": "application/json"], body: Data(raw.utf8))
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
    /// deadline passes).
    public func delayed(by seconds: TimeInterval) -> MockResponse {
        var copy = self
        copy.delay = seconds
        return copy
    }
}
