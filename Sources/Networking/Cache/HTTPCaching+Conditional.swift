import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPCaching {
    /// What a request asks of a stored response besides the response itself.
    enum Preconditions: Equatable {
        /// Nothing: a stored response answers as it is.
        case none
        /// `If-None-Match`, `If-Modified-Since`, or one byte `Range` of a `GET` (with or without `If-Range`):
        /// evaluated by the cache against the stored response the request selects (RFC 9111 §4.3.2, RFC
        /// 9110 §13.2.2, §14.2).
        case evaluated
        /// What only the origin evaluates (`If-Match`, `If-Unmodified-Since`, RFC 9111 §4.3.2; `If-Range`
        /// without `Range`), or a `Range` the cache does not compute (several ranges, another unit, one that
        /// does not parse, on another method than `GET`): the cache takes no part.
        case origin
    }

    /// The preconditions of `request`, its header names read once (the hit path's cost: a byte per name).
    static func preconditions(of request: URLRequest) -> Preconditions {
        guard let fields = request.allHTTPHeaderFields, !fields.isEmpty else { return .none }
        var (conditional, ifRange) = (false, false)
        var range: String?
        for (name, value) in fields {
            guard let first = name.utf8.first, first | 0x20 == UInt8(ascii: "i") || first | 0x20 == UInt8(ascii: "r") else { continue }
            if HeaderFields.sameName(name, "If-Match") || HeaderFields.sameName(name, "If-Unmodified-Since") { return .origin }
            if HeaderFields.sameName(name, "If-None-Match") || HeaderFields.sameName(name, "If-Modified-Since") { conditional = true }
            if HeaderFields.sameName(name, "If-Range") { ifRange = true }
            if HeaderFields.sameName(name, "Range") { range = value }
        }
        if let range {
            guard (request.httpMethod ?? "GET") == "GET", ByteRange(range) != nil else { return .origin }
            return .evaluated
        }
        if ifRange { return .origin }
        return conditional ? .evaluated : .none
    }

    /// `request` without the headers the cache evaluates itself: the request whose stored response it selects.
    static func withoutPreconditions(_ request: URLRequest) -> URLRequest {
        var plain = request
        for name in ["If-None-Match", "If-Modified-Since", "If-Range", "Range"] { plain.setValue(nil, forHTTPHeaderField: name) }
        return plain
    }

    /// How the cache answers `request` from `stored`, the response the request without its preconditions
    /// gets from it (RFC 9110 §13.2.2's order): `304` when `If-None-Match` names its entity tag, or (without
    /// `If-None-Match`) `If-Modified-Since` is not before its last modification; else the `206` of a
    /// `Range` (unless `If-Range` names another representation: the whole response); else the whole
    /// response. `nil` when the cache cannot answer and the request goes to the server: a stored response
    /// other than a `200` (RFC 9111 §4.3.2 evaluates a stored 200), or a range it cannot compute.
    /// `received`: when the stored response arrived, for `If-Modified-Since` when it has neither
    /// `Last-Modified` nor `Date` (without it, such a condition is taken as not met: the stored 200).
    static func answer(to request: URLRequest, from stored: Response, received: Date?, now: Date) -> (HTTPURLResponse, Data)? {
        let http = stored.httpResponse
        guard http.statusCode == 200 else { return nil }
        if let condition = request.value(forHTTPHeaderField: "If-None-Match") {
            if noneMatchFails(condition, etag: http.value(forHTTPHeaderField: "ETag")) { return notModified(http) }
        } else if let since = request.value(forHTTPHeaderField: "If-Modified-Since"), let date = HTTPDate.parse(since, relativeTo: now),
            let modified = lastModified(of: http, now: now) ?? received, modified <= date
        {
            return notModified(http)
        }
        guard let value = request.value(forHTTPHeaderField: "Range"), let range = ByteRange(value) else { return (http, stored.data) }
        if let condition = request.value(forHTTPHeaderField: "If-Range"), !ifRangeMatches(condition, stored: http, now: now) {
            return (http, stored.data)   // another representation: the whole one (RFC 9110 §13.1.5)
        }
        return partial(range, of: stored)
    }

    /// Whether `If-None-Match: condition` is false for a representation whose entity tag is `etag` (RFC
    /// 9110 §13.1.2): a bare `*` (the whole field value; a quoted `"*"` or `W/"*"` is an entity tag like
    /// any other), or a listed tag that matches it by the weak comparison (§8.8.3.2). Unquoted tags are
    /// compared by their text, as a lenient recipient does.
    static func noneMatchFails(_ condition: String, etag: String?) -> Bool {
        if condition.trimmingCharacters(in: .whitespaces) == "*" { return true }
        let listed = entityTags(in: condition)
        guard let etag, let tag = entityTags(in: etag).first else { return false }
        return listed.contains(tag)
    }

    /// The opaque tags of an entity-tag list (`W/` and quotes removed: the weak comparison), read
    /// quote-aware (a comma may stand inside a tag); `*` as itself.
    static func entityTags(in list: String) -> [Substring] {
        var tags: [Substring] = []
        var rest = Substring(list)
        while let start = rest.firstIndex(where: { $0 != " " && $0 != "\t" && $0 != "," }) {
            rest = rest[start...]
            if rest.hasPrefix("W/") || rest.hasPrefix("w/") { rest = rest.dropFirst(2) }
            if rest.first == "\"" {
                let body = rest.dropFirst()
                guard let close = body.firstIndex(of: "\"") else {
                    tags.append(body)
                    break
                }
                tags.append(body[..<close])
                rest = body[body.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                tags.append(Substring(rest[..<end].trimmingCharacters(in: .whitespaces)))
                rest = rest[end...]
            }
        }
        return tags
    }

    /// When `stored` was last modified, for `If-Modified-Since` (RFC 9111 §4.3.2): its `Last-Modified`,
    /// else its `Date`; `nil` without either (then the time it was received counts, which only the entry knows).
    static func lastModified(of stored: HTTPURLResponse, now: Date) -> Date? {
        for name in ["Last-Modified", "Date"] {
            if let value = stored.value(forHTTPHeaderField: name), let date = HTTPDate.parse(value, relativeTo: now) { return date }
        }
        return nil
    }

    /// Header fields a `304` carries (RFC 9110 §15.4.5): those a `200` would, that guide the update of a
    /// stored response; not the content's own.
    private static let notModifiedFields = ["Cache-Control", "Content-Location", "Date", "ETag", "Expires", "Vary", "Last-Modified", "Age"]

    /// The `304 Not Modified` the cache answers for `stored`, without content.
    private static func notModified(_ stored: HTTPURLResponse) -> (HTTPURLResponse, Data)? {
        guard let url = stored.url else { return nil }
        var headers: [String: String] = [:]
        for name in notModifiedFields { headers[name] = stored.value(forHTTPHeaderField: name) }
        guard let response = HTTPURLResponse(url: url, statusCode: 304, httpVersion: "HTTP/1.1", headerFields: headers) else { return nil }
        return (response, Data())
    }
}
