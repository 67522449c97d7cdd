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
        let base = baseURL.absoluteString
        guard var components = URLComponents(string: base), components.scheme != nil, components.host != nil else {
            throw NetworkError.invalidURL("the base URL has no scheme or host")
        }
        let escapedPath = PercentEncoding.path(path)
        if !escapedPath.isEmpty {
            let basePath = components.percentEncodedPath
            let head = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
            let tail = escapedPath.hasPrefix("/") ? String(escapedPath.dropFirst()) : escapedPath
            components.percentEncodedPath = head + "/" + tail
        }
        if !queryItems.isEmpty {
            let query = PercentEncoding.query(queryItems)
            if let existing = components.percentEncodedQuery, !existing.isEmpty {
                components.percentEncodedQuery = existing + "&" + query
            } else {
                components.percentEncodedQuery = query
            }
        }
        guard let url = components.url else {
            throw NetworkError.invalidURL("the path \"\(path)\" cannot be joined to the base URL")
        }
        return url
    }
}
