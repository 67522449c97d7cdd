import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request as a ``MockServer`` received it: method, URL, headers and body.
public struct RecordedRequest: Sendable {
    /// The method, e.g. `GET`.
    public let method: String
    /// The full URL.
    public let url: URL
    /// The header fields as sent, without the mock's own routing header.
    public let headers: [String: String]
    /// The body, read from `httpBody` (Linux) or `httpBodyStream` (Apple platforms), or from the file an
    /// upload is sent from (the provider names it in the task's `taskDescription`); empty when none.
    public let body: Data
    /// The file the body was sent from, when the provider streamed it from disk (a file body, or a
    /// multipart form with files, which is sent from a temporary copy the provider removes afterwards).
    public let bodyFile: URL?

    init(_ request: URLRequest, task: URLSessionTask? = nil) {
        method = request.httpMethod ?? "GET"
        url = request.url ?? URL(fileURLWithPath: "/")
        var headers = request.allHTTPHeaderFields ?? [:]
        for name in headers.keys where name.caseInsensitiveCompare(MockURLProtocol.serverHeader) == .orderedSame {
            headers[name] = nil
        }
        self.headers = headers
        bodyFile = task.flatMap(Self.bodyFile(of:))
        body = request.httpBody ?? request.httpBodyStream.map(Self.read) ?? bodyFile.flatMap { FileManager.default.contents(atPath: $0.path) } ?? Data()
    }

    /// The URL's path, decoded, e.g. `/v1/users/1` (a trailing slash left off, `%2F` shown as `/`): for
    /// reading. Stubs match ``percentEncodedPath``, the path as it went on the wire.
    public var path: String { url.path }

    /// The path exactly as it went on the wire (RFC 9112 §3.2): percent-encoded as sent, a trailing
    /// slash kept, `/` for an empty path; e.g. `/v1/files/a%2Fb/`. Stubs match this (see
    /// ``MockServer/stub(_:_:_:)``).
    public var percentEncodedPath: String { MockPath.wirePath(of: url) }

    /// A header's value, looked up case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The value of a query item in the URL, decoded.
    public func query(_ name: String) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    /// The body decoded as JSON into `type`.
    public func decodeBody<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: body)
    }

    /// The file a provider's upload is sent from: on Linux a URL protocol is not given an upload task's body.
    private static func bodyFile(of task: URLSessionTask) -> URL? {
        guard let description = task.taskDescription, description.hasPrefix(NetworkProvider.bodyFileTaskDescriptionPrefix) else { return nil }
        return URL(fileURLWithPath: String(description.dropFirst(NetworkProvider.bodyFileTaskDescriptionPrefix.count)))
    }

    private static func read(_ stream: InputStream) -> Data {
        var data = Data()
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while stream.hasBytesAvailable {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { break }
            data.append(buffer, count: count)
        }
        return data
    }
}

extension RecordedRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The method and URL, hidden query parameters replaced by a default ``Redactor``, e.g.
    /// `POST https://api.example.com/v1/auth?token=<redacted>`.
    public var description: String {
        "\(method) \(Redactor().url(url))"
    }

    /// ``description``, the headers (secret values replaced) and the body, redacted or by size.
    public var debugDescription: String {
        let redactor = Redactor()
        return description + " \(redactor.headerLines(headers)) " + redactor.body(body, contentType: header("Content-Type"), limit: 256)
    }

    /// What `dump` and test failure output show: the method, the URL, the headers and the body with
    /// secrets replaced by a default ``Redactor`` (so a test log never shows a token). The properties
    /// themselves keep every value for assertions.
    public var customMirror: Mirror {
        let redactor = Redactor()
        return Mirror(
            self,
            children: [
                "method": method,
                "url": redactor.url(url),
                "headers": redactor.headerLines(headers),
                "body": redactor.body(body, contentType: header("Content-Type"), limit: 256),
            ], displayStyle: .struct)
    }
}
