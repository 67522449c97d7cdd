import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ``EventMonitor`` that logs one readable line per call (and a second when a streamed body ends),
/// a line for each failed attempt of a call that made more than one (see ``Verbosity``), or, in verbose mode, the headers and
/// bodies too (truncated). Secrets are hidden by its ``Redactor``: by default the usual credential
/// headers, the header any ``AuthInterceptor`` writes, and secret-named query items and JSON/form fields.
///
/// ```text
/// GET https://api.example.com/v1/users/1 → 200 in 12 ms, 1 attempt, 87 bytes
/// attempt 1: GET https://api.example.com/v1/me → 401 in 9 ms: The server answered with unacceptable status code 401.
/// POST https://api.example.com/v1/auth/refresh → 200 in 21 ms, 1 attempt, 94 bytes
/// GET https://api.example.com/v1/me → 200 in 47 ms, 2 attempts, 310 bytes
/// GET https://api.example.com/v1/chat?q=hi → 200 stream ended, 5120 bytes
/// ```
///
/// The call's line (its summary) keeps its shape whatever happened; an attempt's line starts with
/// `attempt N:`. When an attempt's line is written is said at ``Verbosity``.
///
/// ```swift
/// let provider = NetworkProvider(monitors: [NetworkLogger(verbosity: .verbose)])
/// ```
public struct NetworkLogger: EventMonitor {
    /// How much is logged.
    public enum Verbosity: Sendable {
        /// One line per call; before it, a line for each failed attempt when the call made more than one
        /// (written as the next attempt is decided), when its attempt's failure started a token refresh
        /// (written before the refresh call's line, whether the refresh then succeeds or fails), or when its
        /// only attempt failed with an error that is no ``NetworkError`` (the call's line names only that
        /// error's type, its attempt's line also its case and code: see ``Redactor/error(_:)``). A call
        /// whose only attempt succeeded, or failed with a ``NetworkError`` and started no refresh, has its
        /// one line.
        case basic
        /// A line for every failed attempt, with its request's and response's headers and bodies; then
        /// the call's line, with the last request's and response's headers and bodies.
        ///
        /// Verbose prints response bodies, error bodies included (a 401's, a 422's), as it prints a
        /// successful response's. Secrets are hidden only by name (the ``Redactor``'s headers, query items
        /// and JSON/form fields): a server's message such as `{"message":"token abc… expired for kim@x"}`
        /// is printed. For development: do not enable verbose in production.
        case verbose
    }

    /// How much is logged.
    public let verbosity: Verbosity
    /// What is hidden.
    public let redactor: Redactor
    /// Where lines go.
    public let sink: LogSink
    /// The longest body shown, in characters.
    public let bodyLimit: Int
    /// The lines of failed attempts not written yet, per call.
    let heldAttempts = HeldAttemptLines()

    /// Creates a logger; by default basic, redacting the usual credentials, to standard output.
    public init(verbosity: Verbosity = .basic, redactor: Redactor = Redactor(), sink: LogSink = .standardOutput, bodyLimit: Int = 1_024) {
        self.verbosity = verbosity
        self.redactor = redactor
        self.sink = sink
        self.bodyLimit = bodyLimit
    }

    /// Logs a redirect the provider follows: `↪ 302 https://api.example.com/a → GET https://cdn.example.com/b`.
    public func requestDidRedirect(_ hop: RedirectHop, context: RequestContext) {
        let (from, to) = (URL(string: hop.from).map(redactor.url) ?? hop.from, URL(string: hop.to).map(redactor.url) ?? hop.to)
        sink.write(Self.marked("↪ \(hop.statusCode) \(from) → \(hop.method) \(to)", context))
        heldAttempts.noteHop(hop, for: context)   // an attempt that fails after it is named by where it went
    }

    /// Logs the call's line (method, redacted URL, status or failure, time, attempts, body size), after
    /// the lines of its failed attempts not written yet (see ``Verbosity``); in verbose mode also the last
    /// request's and response's headers and bodies, redacted and truncated.
    public func requestDidFinish(
        _ request: URLRequest,
        result: Result<Response, any Error>,
        attempts: Int,
        duration: TimeInterval,
        context: RequestContext
    ) {
        let held = heldAttempts.take(for: context)
        if attempts > 1 || verbosity == .verbose || held.contains(where: \.saysMore) {
            held.flatMap(\.lines).forEach(sink.write)
        }
        let method = Self.marked(request.httpMethod ?? "GET", context)
        let url = request.url.map(redactor.url) ?? "?"
        let timing = "in \(Int((duration * 1_000).rounded())) ms, \(attempts) attempt\(attempts == 1 ? "" : "s")"
        switch result {
        case .success(let response):
            sink.write("\(method) \(url) → \(response.statusCode) \(timing), \(response.data.count) bytes")
        case .failure(let error):
            let reason = (error as? NetworkError)?.description ?? "\(type(of: error))"
            sink.write("\(method) \(url) → failed \(timing): \(reason)")
        }
        guard verbosity == .verbose else { return }
        sink.write(describe("request", headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody))
        if case .success(let response) = result {
            sink.write(describe("response", headers: Self.headers(of: response), body: response.data))
        }
    }

    /// Logs the end of a streamed body: `… → 200 stream ended, 5120 bytes`, or `… → 200 stream failed
    /// after 512 bytes: <reason>`; the URL is redacted as in the call's own line.
    public func streamDidEnd(_ response: Response, error: (any Error)?, bytes: Int64, context: RequestContext) {
        let method = response.request.httpMethod ?? "GET"
        let url = response.request.url.map(redactor.url) ?? "?"
        if let error {
            let reason = (error as? NetworkError)?.description ?? "\(type(of: error))"
            sink.write("\(method) \(url) → \(response.statusCode) stream failed after \(bytes) bytes: \(reason)")
        } else {
            sink.write("\(method) \(url) → \(response.statusCode) stream ended, \(bytes) bytes")
        }
    }

    /// One line per call that used the response cache: `GET https://… cache: hit` (the key's URL holds
    /// no secret; the account's partition is not shown).
    public func cacheDidAnswer(_ result: CacheResult, key: CacheKey, context: RequestContext) {
        sink.write(Self.marked("\(key.method) \(URL(string: key.url).map(redactor.url) ?? "?") cache: \(result)", context))
    }

    /// Logs a server whose chain matched none of its pins, by the keys' pins only:
    /// `⚠︎ pins: api.example.com presented keys [a…=, b…=], none of its pins [c…=, d…=]: the call was stopped`.
    public func pinValidationDidFail(_ mismatch: PinMismatch, context: RequestContext) {
        sink.write("⚠︎ pins: \(mismatch)")
    }

    /// The response's header fields as text.
    static func headers(of response: Response) -> [String: String] {
        response.httpResponse.allHeaderFields.reduce(into: [String: String]()) { result, field in
            result["\(field.key)"] = "\(field.value)"
        }
    }

    /// A verbose block: `title:`, then the redacted header lines and the redacted, truncated body.
    func describe(_ title: String, headers: [String: String], body: Data?) -> String {
        var lines = redactor.headerLines(headers).map { "  " + $0 }
        let contentType = headers.first { $0.key.caseInsensitiveCompare("Content-Type") == .orderedSame }?.value
        if let body, !body.isEmpty {
            lines.append("  " + redactor.body(body, contentType: contentType, limit: bodyLimit))
        }
        return (["  \(title):"] + lines).joined(separator: "\n")
    }
}
