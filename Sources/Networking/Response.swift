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

    /// Creates a response. The provider makes these; tests and retriers may make their own.
    public init(data: Data, httpResponse: HTTPURLResponse, request: URLRequest) {
        self.data = data
        self.httpResponse = httpResponse
        self.request = request
    }

    /// The HTTP status code.
    public var statusCode: Int { httpResponse.statusCode }

    /// The value of a response header, looked up case-insensitively.
    public func value(forHTTPHeaderField name: String) -> String? {
        httpResponse.value(forHTTPHeaderField: name)
    }
}
