import Foundation

extension MockResource {
    /// How a ``MockResource`` answers a `GET` with a `Range` (RFC 9110 §14.2) and an `If-Range`
    /// (§13.1.5): as a server that supports ranges does, or as one of the servers found in the wild.
    ///
    /// By default (``honoured``) a single range the body can satisfy gets `206 Partial Content` (§15.3.7)
    /// with `Content-Range: bytes first-last/complete` (§14.4) and those bytes; a range that starts past the
    /// body's end gets `416 Range Not Satisfiable` (§15.5.17) with `Content-Range: bytes */complete`; an
    /// `If-Range` that is not the resource's current strong `ETag` (or exactly its `Last-Modified` date)
    /// gets `200` with the whole body. A `Range` of several ranges, of another unit than `bytes`, or that
    /// does not parse, gets the whole body with `200`, as §14.2 lets a server ignore `Range`.
    ///
    /// ```swift
    /// let file = MockResource(body: bytes, etag: "\"v1\"")
    /// file.rangeBehaviour = .ignoringIfRange           // the splice case a client must refuse
    /// file.rangeBehaviour = .capped(at: 2_000)          // at most 2,000 bytes a 206
    /// file.rangeBehaviour = RangeBehaviour(maximumRangeLength: 2_000, omitsCompleteLength: true)
    /// ```
    public struct RangeBehaviour: Sendable, Equatable {
        /// Whether every `Range` is ignored: the answer is always the whole body with `200` (a server
        /// without range support, RFC 9110 §14.2).
        public var ignoresRanges: Bool
        /// Whether `If-Range` is ignored: a range gets a `206` of the current version whatever validator the
        /// request names (RFC 9110 §13.1.5 says a server must not; a client that appends it splices two versions).
        public var ignoresIfRange: Bool
        /// At most this many bytes a `206`, with a `Content-Range` that says so (RFC 9110 §14.4 lets a
        /// server send less than asked); `nil` for no cap. A value under 1 caps at 1 byte.
        public var maximumRangeLength: Int?
        /// Whether a `206`'s `Content-Range` gives `*` for the complete length (`bytes 0-99/*`, RFC 9110
        /// §14.4, as a server that does not know it sends); a `416` then has no `Content-Range` at all.
        public var omitsCompleteLength: Bool

        /// A behaviour; the defaults are those of ``honoured``.
        public init(ignoresRanges: Bool = false, ignoresIfRange: Bool = false, maximumRangeLength: Int? = nil, omitsCompleteLength: Bool = false) {
            self.ignoresRanges = ignoresRanges
            self.ignoresIfRange = ignoresIfRange
            self.maximumRangeLength = maximumRangeLength
            self.omitsCompleteLength = omitsCompleteLength
        }

        /// Ranges and `If-Range` answered as RFC 9110 says (the default).
        public static let honoured = RangeBehaviour()
        /// Every range answered with the whole body and `200`.
        public static let ignoringRanges = RangeBehaviour(ignoresRanges: true)
        /// Every satisfiable range answered with a `206` of the current version, whatever its `If-Range`.
        public static let ignoringIfRange = RangeBehaviour(ignoresIfRange: true)

        /// Ranges honoured, but a `206` holds at most `bytes` bytes.
        public static func capped(at bytes: Int) -> RangeBehaviour {
            RangeBehaviour(maximumRangeLength: bytes)
        }
    }

    /// What a range request gets.
    enum RangeAnswer: Equatable {
        /// No range applies: the whole body with `200` (no `Range`, ignored, or `If-Range` failed).
        case whole(askedForRange: Bool)
        /// `206` with these bytes of the body.
        case partial(first: Int, last: Int)
        /// `416`.
        case unsatisfiable
    }

    /// The answer to a request with `range` and `ifRange` for a body of `length` bytes whose validators
    /// are `etag` and `lastModified`, under `behaviour`. Only a `GET` is ever answered with a range.
    static func rangeAnswer(
        method: String, range: String?, ifRange: String?, length: Int, etag: String?, lastModified: String?, behaviour: RangeBehaviour
    ) -> RangeAnswer {
        guard let range, method == "GET" else { return .whole(askedForRange: false) }
        guard !behaviour.ignoresRanges, let spec = singleRange(range) else { return .whole(askedForRange: true) }
        if let ifRange, !behaviour.ignoresIfRange, !validates(ifRange, etag: etag, lastModified: lastModified) {
            return .whole(askedForRange: true)
        }
        var first: Int
        var last = length - 1
        switch spec {
        case .from(let start, let end):
            guard start < length else { return .unsatisfiable }
            first = start
            if let end { last = min(end, length - 1) }
        case .suffix(let count):
            guard count > 0, length > 0 else { return .unsatisfiable }
            first = max(0, length - count)
        }
        if let most = behaviour.maximumRangeLength, last - first >= most {
            last = first + max(1, most) - 1   // `last - first` does not overflow: both lie within the body
        }
        return .partial(first: first, last: last)
    }

    /// One parsed `range-spec`.
    private enum RangeSpec {
        /// `first-` or `first-last`.
        case from(Int, Int?)
        /// `-count`: the last `count` bytes.
        case suffix(Int)
    }

    /// The one byte range of a `Range` value (`bytes=N-`, `bytes=N-M`, `bytes=-S`), or `nil` when it has
    /// another unit, several ranges, or does not parse (RFC 9110 §14.1.2: `last < first` is invalid).
    private static func singleRange(_ value: String) -> RangeSpec? {
        guard let equals = value.firstIndex(of: "="),
            value[..<equals].trimmingCharacters(in: .whitespaces).caseInsensitiveCompare("bytes") == .orderedSame
        else { return nil }
        // Empty list elements do not count (RFC 9110 §5.6.1): `bytes=1-2,` is one range.
        let specs = value[value.index(after: equals)...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard specs.count == 1, let spec = specs.first,
            let dash = spec.firstIndex(of: "-")
        else { return nil }
        let before = spec[..<dash]
        let after = spec[spec.index(after: dash)...]
        if before.isEmpty {
            return number(after).map(RangeSpec.suffix)
        }
        guard let first = number(before) else { return nil }
        if after.isEmpty { return .from(first, nil) }
        guard let last = number(after), last >= first else { return nil }
        return .from(first, last)
    }

    /// The decimal digits of `text` as a number (`Int.max` when they overflow), or `nil` unless all digits.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text) ?? Int.max
    }

    /// Whether an `If-Range` value names the current representation (RFC 9110 §13.1.5): an entity tag by
    /// strong comparison (a weak tag, sent or current, never matches, §8.8.3.2), else a date that is exactly
    /// the `Last-Modified`.
    private static func validates(_ ifRange: String, etag: String?, lastModified: String?) -> Bool {
        let value = ifRange.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard let etag, !value.hasPrefix("W/"), !etag.hasPrefix("W/") else { return false }
            return value == etag.trimmingCharacters(in: .whitespaces)
        }
        return lastModified == value
    }
}
