import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Endpoint {
    /// Builds the `URLRequest` this endpoint describes. A pure function of the endpoint.
    ///
    /// - Parameter encoder: the JSON encoder for a ``RequestBody/json(_:encoder:)`` body that names none.
    /// - Throws: ``NetworkError/invalidURL(_:)`` naming what was wrong, or
    ///   ``NetworkError/encodingFailed(_:)`` carrying the encoder's error.
    public func urlRequest(encoder: JSONEncoder = JSONEncoder()) throws -> URLRequest {
        var request = URLRequest(url: try url())
        request.httpMethod = method.rawValue
        if let timeout { request.timeoutInterval = Self.effectiveTimeout(timeout) }
        if let (data, contentType) = try body.encoded(defaultEncoder: encoder) {
            request.httpBody = data
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    /// Linux's URLSession truncates a timeout to whole seconds, so 0.5 s would time out at once
    /// (measured: after 8 ms); there the timeout is rounded up to the next whole second.
    static func effectiveTimeout(_ timeout: TimeInterval) -> TimeInterval {
        #if canImport(FoundationNetworking)
        return timeout.rounded(.up)
        #else
        return timeout
        #endif
    }

    /// The full URL: ``baseURL`` joined with ``path``, with ``queryItems`` appended.
    ///
    /// - Throws: ``NetworkError/invalidURL(_:)``.
    public func url() throws -> URL {
        let baseURL = self.baseURL
        guard baseURL.scheme != nil, baseURL.host != nil else {
            throw NetworkError.invalidURL("the base URL has no scheme or host")
        }
        // Split the base into everything up to its path, its query and its fragment, and join the
        // strings: one parse (URL(string:)) instead of URLComponents' parse, edits and re-serialization.
        var head = Substring(baseURL.absoluteString)
        var fragment: Substring = ""
        var baseQuery: Substring = ""
        var baseHasQuery = false
        if let hash = head.utf8.firstIndex(of: UInt8(ascii: "#")) {
            fragment = head[hash...]
            head = head[..<hash]
        }
        if let mark = head.utf8.firstIndex(of: UInt8(ascii: "?")) {
            baseQuery = head[head.utf8.index(after: mark)...]
            baseHasQuery = true
            head = head[..<mark]
        }
        var joined = String(head)
        let escapedPath = PercentEncoding.path(path)
        if !escapedPath.isEmpty {
            if joined.utf8.last == UInt8(ascii: "/") { joined.removeLast() }
            joined += "/"
            joined += escapedPath.utf8.first == UInt8(ascii: "/") ? escapedPath.dropFirst() : Substring(escapedPath)
        }
        let items = queryItems
        if baseHasQuery || !items.isEmpty {
            joined += "?"
            joined += baseQuery
            if !items.isEmpty {
                if !baseQuery.isEmpty { joined += "&" }
                joined += PercentEncoding.query(items)
            }
        }
        joined += fragment
        guard let url = URL(string: joined) else {
            throw NetworkError.invalidURL("the path \"\(path)\" cannot be joined to the base URL")
        }
        return url
    }
}
