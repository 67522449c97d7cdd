import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ``EventMonitor`` that logs one readable line per call (and a second when a streamed body ends),
/// or, in verbose mode, the headers and bodies too (truncated). Secrets are hidden by its ``Redactor``: by default the usual credential
/// headers, the header any ``AuthInterceptor`` writes, and secret-named query items and JSON/form fields.
///
/// ```text
/// GET https://api.example.com/v1/users/1 → 200 in 12 ms, 1 attempt, 87 bytes
/// POST https://api.example.com/v1/auth/refresh → failed in 3 ms, 1 attempt: URLError -1009
/// GET https://api.example.com/v1/chat?q=hi → 200 stream ended, 5120 bytes
/// ```
///
/// ```swift
/// let provider = NetworkProvider(monitors: [NetworkLogger(verbosity: .verbose)])
/// ```
public struct NetworkLogger: EventMonitor {
    /// How much is logged.
    public enum Verbosity: Sendable {
        /// One line per call.
        case basic
        /// The line, then the last request's and response's headers and bodies.
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
        sink.write("↪ \(hop.statusCode) \(from) → \(hop.method) \(to)")
    }

    /// Logs the call's line (method, redacted URL, status or failure, time, attempts, body size); in verbose mode
    /// also the last request's and response's headers and bodies, redacted and truncated.
    public func requestDidFinish(
        _ request: URLRequest,
        result: Result<Response, any Error>,
        attempts: Int,
        duration: TimeInterval,
        context: RequestContext
    ) {
        let method = (context.isBackgroundRevalidation ? "(background) " : "") + (request.httpMethod ?? "GET")
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
            let headers = response.httpResponse.allHeaderFields.reduce(into: [String: String]()) { result, field in
                result["\(field.key)"] = "\(field.value)"
            }
            sink.write(describe("response", headers: headers, body: response.data))
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
        sink.write("\(key.method) \(URL(string: key.url).map(redactor.url) ?? "?") cache: \(result)")
    }

    /// Logs a server whose chain matched none of its pins, by the keys' pins only:
    /// `⚠︎ pins: api.example.com presented keys [a…=, b…=], none of its pins [c…=, d…=]: the call was stopped`.
    public func pinValidationDidFail(_ mismatch: PinMismatch, context: RequestContext) {
        sink.write("⚠︎ pins: \(mismatch)")
    }

    private func describe(_ title: String, headers: [String: String], body: Data?) -> String {
        var lines = redactor.headerLines(headers).map { "  " + $0 }
        let contentType = headers.first { $0.key.caseInsensitiveCompare("Content-Type") == .orderedSame }?.value
        if let body, !body.isEmpty {
            lines.append("  " + redactor.body(body, contentType: contentType, limit: bodyLimit))
        }
        return (["  \(title):"] + lines).joined(separator: "\n")
    }
}
