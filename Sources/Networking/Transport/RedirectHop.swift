import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One redirect a call followed, as monitors see it (``EventMonitor/requestDidRedirect(_:context:)``)
/// and ``CallReport/redirects`` lists it. The URLs are text with their secrets replaced by a default
/// ``Redactor`` (tokens in the query or the fragment, a password), so a hop can be logged as it is.
public struct RedirectHop: Sendable, Equatable, CustomStringConvertible {
    /// The redirect's status: 301, 302, 303, 307 or 308.
    public var statusCode: Int
    /// The URL that answered with the redirect, redacted.
    public var from: String
    /// The URL the next request went to, redacted.
    public var to: String
    /// The method of the next request (a 303, or a 301/302 of a POST, turns it into GET).
    public var method: String
    /// The attempt (1-based) the hop belongs to: a retried call follows its redirects again.
    public var attempt: Int

    /// Creates a hop (for tests and fakes; the provider makes its own).
    public init(statusCode: Int, from: String, to: String, method: String, attempt: Int) {
        self.statusCode = statusCode
        self.from = from
        self.to = to
        self.method = method
        self.attempt = attempt
    }

    init(statusCode: Int, from: URL?, to next: URLRequest, attempt: Int) {
        let redactor = Redactor()
        self.init(
            statusCode: statusCode, from: from.map(redactor.url) ?? "", to: next.url.map(redactor.url) ?? "",
            method: next.httpMethod ?? "GET", attempt: attempt)
    }

    /// `302 https://api.example.com/a → GET https://cdn.example.com/b`.
    public var description: String {
        "\(statusCode) \(from) → \(method) \(to)"
    }
}
