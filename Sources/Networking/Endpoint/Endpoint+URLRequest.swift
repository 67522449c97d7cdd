import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Endpoint {
    /// Builds the `URLRequest` this endpoint describes. A pure function of the endpoint.
    ///
    /// - Parameter encoder: the JSON encoder for a ``RequestBody/json(_:encoder:)`` body that names none.
    /// - Throws: ``NetworkError/invalidURL(_:)`` naming what was wrong,
    ///   ``NetworkError/encodingFailed(_:)`` carrying the encoder's error, or
    ///   ``NetworkError/invalidRequest(field:reason:)`` for a method or header that would corrupt the
    ///   HTTP message (CR, LF, NUL, a method that is not a token) or a timeout that is not positive.
    public func urlRequest(encoder: JSONEncoder = JSONEncoder()) throws -> URLRequest {
        try urlRequestAndBody(encoder: encoder).request
    }

    /// The request, and its body as encoded: the provider streams a file body (or a multipart form with
    /// files) from disk, since it is not in the request.
    func urlRequestAndBody(
        encoder: JSONEncoder, additionalHeaders: [String: String] = [:]
    ) throws -> (request: URLRequest, body: RequestBody.Encoded?) {
        var request = URLRequest(url: try url())
        let method = self.method
        if method != .get {   // GET is URLRequest's own default
            try WireValidation.check(method: method.rawValue)
            request.httpMethod = method.rawValue
        }
        if let timeout { request.timeoutInterval = try Self.effectiveTimeout(timeout) }
        let body = try self.body.encoded(defaultEncoder: encoder)
        // Every field gathered first and set in one assignment (see HeaderFields): the body's, then the
        // endpoint's (which win), then the additional ones the endpoint does not set itself.
        var fields: [String: String] = [:]
        switch body {
        case .inline(let data, let contentType)?:
            try Self.checkBodyContentType(contentType)
            request.httpBody = data
            fields["Content-Type"] = contentType
        case .file(let file, let contentType)?:
            try Self.checkBodyContentType(contentType)
            fields["Content-Type"] = contentType
            fields["Content-Length"] = String(try RequestBody.size(ofBodyFile: file))
        case .spooled?, nil:
            break   // a form with files gets its Content-Type when the provider writes it out
        }
        let headers = self.headers
        if !headers.isEmpty {
            try WireValidation.check(headers: headers)   // before URLRequest, which drops some silently on Linux
            for (name, value) in headers {
                HeaderFields.set(value, for: name, in: &fields)
            }
            if case .multipart = self.body, case .inline(_, let contentType)? = body {
                HeaderFields.set(contentType, for: "Content-Type", in: &fields)   // never a form without its boundary
            }
        }
        for (name, value) in additionalHeaders {
            HeaderFields.set(value, for: name, in: &fields, keepingExisting: true)
        }
        if !fields.isEmpty { request.allHTTPHeaderFields = fields }
        return (request, body)
    }

    private static func checkBodyContentType(_ contentType: String) throws {
        guard WireValidation.isFieldValue(contentType) else {
            throw NetworkError.invalidRequest(field: "body's content type", reason: "has CR, LF, NUL or another control character")
        }
    }

    /// The longest per-request timeout set on a `URLRequest`: a day. A longer or infinite ``timeout``
    /// is clamped to it (Linux's URLSession traps on infinite or huge values).
    static var maximumTimeout: TimeInterval { 86_400 }

    /// `timeout` as set on the `URLRequest`: clamped to ``maximumTimeout`` and rounded up to a whole
    /// second, on every platform: URLSession on Linux truncates it (0.5 s would time out at once;
    /// measured: after 8 ms), and one rule everywhere keeps what the tests prove here true on iOS.
    /// Throws ``NetworkError/invalidRequest(field:reason:)`` for zero, a negative value or NaN.
    static func effectiveTimeout(_ timeout: TimeInterval) throws -> TimeInterval {
        guard timeout > 0 else {   // also NaN
            throw NetworkError.invalidRequest(field: "timeout", reason: "must be a positive number of seconds")
        }
        return min(timeout, maximumTimeout).rounded(.up)
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
        let absolute = baseURL.absoluteString
        // Where the query and the fragment start, in one pass over the bytes (a `firstIndex(of:)` on a
        // substring's UTF-8 view is a generic walk: ~900 instructions each).
        var (markOffset, hashOffset) = (-1, -1)
        var text = absolute
        text.withUTF8 { bytes in
            for offset in bytes.indices {
                if bytes[offset] == UInt8(ascii: "#") {
                    hashOffset = offset
                    break
                }
                if markOffset < 0, bytes[offset] == UInt8(ascii: "?") { markOffset = offset }
            }
        }
        let utf8 = absolute.utf8
        var head = absolute[...]
        var fragment: Substring = ""
        var baseQuery: Substring = ""
        let baseHasQuery = markOffset >= 0
        if hashOffset >= 0 {
            let hash = utf8.index(utf8.startIndex, offsetBy: hashOffset)
            fragment = absolute[hash...]
            head = absolute[..<hash]
        }
        if markOffset >= 0 {
            let mark = utf8.index(utf8.startIndex, offsetBy: markOffset)
            baseQuery = head[utf8.index(after: mark)...]
            head = head[..<mark]
        }
        let escapedPath = PercentEncoding.path(path)
        let items = queryItems
        let query = items.isEmpty ? "" : PercentEncoding.query(items)
        // The URL keeps this string: made with the capacity it needs, not grown by appends (which double it).
        var joined = ""
        joined.reserveCapacity(head.utf8.count + escapedPath.utf8.count + baseQuery.utf8.count + query.utf8.count + fragment.utf8.count + 3)
        joined += head
        if !escapedPath.isEmpty {
            if joined.utf8.last == UInt8(ascii: "/") { joined.removeLast() }
            joined += "/"
            joined += escapedPath.utf8.first == UInt8(ascii: "/") ? escapedPath.dropFirst() : Substring(escapedPath)
        }
        if baseHasQuery || !items.isEmpty {
            joined += "?"
            joined += baseQuery
            if !items.isEmpty {
                if !baseQuery.isEmpty { joined += "&" }
                joined += query
            }
        }
        joined += fragment
        guard let url = URL(string: joined) else {
            throw NetworkError.invalidURL("the path \"\(path)\" cannot be joined to the base URL")
        }
        return url
    }
}
