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
    /// When set, the request fails with this error instead of receiving a response.
    public var error: URLError?
    /// Seconds to wait before answering; cancelling the request ends the wait.
    public var delay: TimeInterval

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

    /// This response, answered after `seconds`.
    public func delayed(by seconds: TimeInterval) -> MockResponse {
        var copy = self
        copy.delay = seconds
        return copy
    }
}
