import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One byte range a request asks for (RFC 9110 §14.1.2): `bytes=first-last`, `bytes=first-` or
/// `bytes=-suffix`. A `Range` of several ranges, of another unit, or that does not parse has none: the
/// cache does not compute it and the request goes to the server (RFC 9110 §14.2).
struct ByteRange: Equatable {
    /// `first-` (`last` `nil`) or `first-last`; `last` is never below `first`.
    let first: Int?
    /// The last position asked for, or `nil` for "to the end".
    let last: Int?
    /// `-suffix`: the last `suffix` bytes (then `first` and `last` are `nil`).
    let suffix: Int?

    /// The one byte range of a `Range` value, or `nil`. The unit is case-insensitive (RFC 9110 §14.1);
    /// empty list elements do not count (RFC 9110 §5.6.1).
    init?(_ value: String) {
        guard let equals = value.firstIndex(of: "="),
            value[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "bytes"
        else { return nil }
        let specs = value[value.index(after: equals)...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard specs.count == 1, let spec = specs.first, let dash = spec.firstIndex(of: "-") else { return nil }
        let (before, after) = (spec[..<dash], spec[spec.index(after: dash)...])
        if before.isEmpty {
            guard let count = Self.number(after) else { return nil }
            first = nil
            last = nil
            suffix = count
            return
        }
        guard let start = Self.number(before) else { return nil }
        let end = after.isEmpty ? nil : Self.number(after)
        guard after.isEmpty || (end ?? -1) >= start else { return nil }   // RFC 9110 §14.1.2: invalid otherwise
        first = start
        last = end
        suffix = nil
    }

    /// The positions this range selects of a representation of `length` bytes, or `nil` when it is not
    /// satisfiable (RFC 9110 §14.1.1: a first position at or past the end, a suffix of 0, or nothing to
    /// select from).
    func bounds(length: Int) -> ClosedRange<Int>? {
        guard length > 0 else { return nil }
        if let suffix {
            guard suffix > 0 else { return nil }
            return max(0, length - suffix)...(length - 1)
        }
        guard let first, first < length else { return nil }
        return first...min(last ?? (length - 1), length - 1)
    }

    /// The decimal digits of `text` as a number (`Int.max` when they overflow), or `nil` unless all digits.
    private static func number(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text) ?? Int.max
    }
}

extension HTTPCaching {
    /// Whether the `If-Range` value `condition` names `stored`'s representation (RFC 9110 §13.1.5): an
    /// entity tag by the strong comparison (a weak tag, sent or stored, never matches, §8.8.3.2); a date
    /// only when it is exactly the stored `Last-Modified` and that is a strong validator (its `Date` at
    /// least 60 seconds later, §8.8.2.2).
    static func ifRangeMatches(_ condition: String, stored: HTTPURLResponse, now: Date) -> Bool {
        let value = condition.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard !value.hasPrefix("W/"), let etag = stored.value(forHTTPHeaderField: "ETag")?.trimmingCharacters(in: .whitespaces) else {
                return false
            }
            return !etag.hasPrefix("W/") && etag == value
        }
        guard let modified = stored.value(forHTTPHeaderField: "Last-Modified"), modified.trimmingCharacters(in: .whitespaces) == value,
            let lastModified = HTTPDate.parse(modified, relativeTo: now),
            let date = stored.value(forHTTPHeaderField: "Date").flatMap({ HTTPDate.parse($0, relativeTo: now) })
        else { return false }
        return date.timeIntervalSince(lastModified) >= 60
    }

    /// Header fields of a complete response that describe its content's bytes, not the part's (RFC 9110
    /// §8.6, §14.4; `Content-MD5`, RFC 1864; `Content-Digest`, RFC 9530 §2): a `206` the cache makes
    /// leaves them out (it sets its own `Content-Length` and `Content-Range`). `Repr-Digest`, `ETag` and
    /// `Last-Modified` describe the representation, and stay.
    private static let partOfTheWhole = ["Content-Length", "Content-Range", "Content-MD5", "Content-Digest"]

    /// The `206 Partial Content` of `range` of `stored` (a complete `200`, as the cache keeps it), with
    /// `Content-Range` and `Content-Length` (RFC 9110 §14.4, §15.3.7); `nil` when the cache cannot compute
    /// it: the range is not satisfiable, the stored body is not the representation's bytes as sent (a
    /// `Content-Encoding` it was decoded from, or a `Content-Length` it does not have).
    static func partial(_ range: ByteRange, of stored: Response) -> (HTTPURLResponse, Data)? {
        let http = stored.httpResponse
        if let coding = http.value(forHTTPHeaderField: "Content-Encoding"), coding.trimmingCharacters(in: .whitespaces).lowercased() != "identity" {
            return nil
        }
        let length = stored.data.count
        if let declared = http.value(forHTTPHeaderField: "Content-Length"), Int(declared.trimmingCharacters(in: .whitespaces)) != length {
            return nil
        }
        guard let bounds = range.bounds(length: length), let url = http.url else { return nil }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            let name = "\(name)"
            guard !partOfTheWhole.contains(where: { HeaderFields.sameName(name, $0) }) else { continue }
            headers[name] = "\(value)"
        }
        headers["Content-Range"] = "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(length)"
        headers["Content-Length"] = String(bounds.count)
        guard let partial = HTTPURLResponse(url: url, statusCode: 206, httpVersion: "HTTP/1.1", headerFields: headers) else { return nil }
        return (partial, stored.data.subdata(in: (stored.data.startIndex + bounds.lowerBound)..<(stored.data.startIndex + bounds.upperBound + 1)))
    }
}
