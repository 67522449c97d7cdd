import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A resource a ``MockServer`` serves with validators, as an HTTP server with caching does: a request
/// whose `If-None-Match` matches its `ETag` (weak comparison), or whose `If-Modified-Since` names its
/// `Last-Modified`, gets `304 Not Modified` without a body; any other gets `200` with the body. It counts
/// both, so a test can tell a revalidation from a full load.
///
/// A `GET` with a `Range` (and `If-Range`) gets `206 Partial Content` or `416 Range Not Satisfiable` as
/// ``RangeBehaviour`` says (RFC 9110 §14.2, §13.1.5), so a test can resume a download through it; those
/// are counted too (``partialResponses``, ``unsatisfiableRangeResponses``, ``fullResponsesToRanges``).
///
/// ```swift
/// let profile = MockResource.json(User(id: 1, name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
/// server.stub(.get, "/v1/me", resource: profile)
/// // ... a call, the clock moved past 60 s, a second call ...
/// #expect(profile.fullResponses == 1 && profile.notModifiedResponses == 1)
/// ```
public final class MockResource: @unchecked Sendable {
    // @unchecked: every stored property below is guarded by `lock`.
    private let lock = NSLock()
    private var body: Data
    private var etag: String?
    private var lastModified: String?
    private var headers: [String: String]
    private var full = 0
    private var notModified = 0
    private var partial = 0
    private var unsatisfiable = 0
    private var wholeToRange = 0
    private var behaviour = RangeBehaviour.honoured

    /// Creates a resource.
    ///
    /// - Parameters:
    ///   - body: the representation.
    ///   - etag: its entity tag, quoted (`"\"v1\""`, or weak: `"W/\"v1\""`), or `nil` for none.
    ///   - lastModified: its `Last-Modified` date, or `nil` for none (formatted as an HTTP date).
    ///   - cacheControl: the `Cache-Control` of every answer (the 304 too), or `nil` for none.
    ///   - headers: more headers for every answer (e.g. `Vary`, `Expires`, `Content-Type`).
    public init(body: Data, etag: String? = nil, lastModified: Date? = nil, cacheControl: String? = nil, headers: [String: String] = [:]) {
        self.body = Data(body)   // indices from 0, whatever slice was given
        self.etag = etag
        self.lastModified = lastModified.map(MockResource.httpDate)
        var headers = headers
        if let cacheControl { headers["Cache-Control"] = cacheControl }
        self.headers = headers
    }

    /// A JSON resource (`Content-Type: application/json`) of `value`.
    public static func json(
        _ value: some Encodable, etag: String? = nil, lastModified: Date? = nil, cacheControl: String? = nil, headers: [String: String] = [:]
    ) -> MockResource {
        let body = MockResponse.json(value).body
        var headers = headers
        if !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
            headers["Content-Type"] = "application/json"
        }
        return MockResource(body: body, etag: etag, lastModified: lastModified, cacheControl: cacheControl, headers: headers)
    }

    /// How many `200` answers (with the body) it gave.
    public var fullResponses: Int {
        lock.lock()
        defer { lock.unlock() }
        return full
    }

    /// How many `304 Not Modified` answers it gave.
    public var notModifiedResponses: Int {
        lock.lock()
        defer { lock.unlock() }
        return notModified
    }

    /// How many `206 Partial Content` answers it gave.
    public var partialResponses: Int {
        lock.lock()
        defer { lock.unlock() }
        return partial
    }

    /// How many `416 Range Not Satisfiable` answers it gave.
    public var unsatisfiableRangeResponses: Int {
        lock.lock()
        defer { lock.unlock() }
        return unsatisfiable
    }

    /// How many requests with a `Range` got the whole body with `200` (an `If-Range` for another version,
    /// several ranges, or ranges ignored); ``fullResponses`` counts them too.
    public var fullResponsesToRanges: Int {
        lock.lock()
        defer { lock.unlock() }
        return wholeToRange
    }

    /// How it answers `Range` and `If-Range`: ``RangeBehaviour/honoured`` unless a test sets another, to
    /// play a server found in the wild. A change applies from the next request on.
    public var rangeBehaviour: RangeBehaviour {
        get {
            lock.lock()
            defer { lock.unlock() }
            return behaviour
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            behaviour = newValue
        }
    }

    /// Changes the representation: a new body and validators (a conditional request for the old ones
    /// then gets the new body).
    public func update(body: Data, etag: String?, lastModified: Date? = nil) {
        lock.lock()
        defer { lock.unlock() }
        self.body = Data(body)   // indices from 0, whatever slice was given
        self.etag = etag
        self.lastModified = lastModified.map(Self.httpDate)
    }

    /// Changes the headers of later answers: `value` for `name`, or none when `nil`.
    public func setHeader(_ name: String, to value: String?) {
        lock.lock()
        defer { lock.unlock() }
        headers[name] = value
    }

    /// The answer to `request`.
    public func response(to request: RecordedRequest) -> MockResponse {
        lock.lock()
        defer { lock.unlock() }
        var headers = self.headers
        if let etag { headers["ETag"] = etag }
        if let lastModified { headers["Last-Modified"] = lastModified }
        if isNotModified(request) {
            notModified += 1
            headers.removeValue(forKey: "Content-Type")
            return MockResponse(statusCode: 304, headers: headers)
        }
        let answer = Self.rangeAnswer(
            method: request.method, range: request.header("Range"), ifRange: request.header("If-Range"), length: body.count, etag: etag,
            lastModified: lastModified, behaviour: behaviour)
        let complete = behaviour.omitsCompleteLength ? "*" : String(body.count)
        switch answer {
        case .partial(let first, let last):
            partial += 1
            headers["Content-Range"] = "bytes \(first)-\(last)/\(complete)"
            headers["Content-Length"] = String(last - first + 1)
            return MockResponse(statusCode: 206, headers: headers, body: body.subdata(in: first..<(last + 1)))
        case .unsatisfiable:
            unsatisfiable += 1
            headers.removeValue(forKey: "Content-Type")
            if !behaviour.omitsCompleteLength { headers["Content-Range"] = "bytes */\(body.count)" }
            return MockResponse(statusCode: 416, headers: headers)
        case .whole(let askedForRange):
            if askedForRange { wholeToRange += 1 }
            full += 1
            return MockResponse(statusCode: 200, headers: headers, body: request.method == "HEAD" ? Data() : body)
        }
    }

    private func isNotModified(_ request: RecordedRequest) -> Bool {
        if let condition = request.headers.first(where: { $0.key.caseInsensitiveCompare("If-None-Match") == .orderedSame })?.value {
            guard let etag else { return false }
            let tags = condition.split(separator: ",").map { Self.opaque($0) }
            return tags.contains("*") || tags.contains(Self.opaque(Substring(etag)))
        }
        if let since = request.headers.first(where: { $0.key.caseInsensitiveCompare("If-Modified-Since") == .orderedSame })?.value {
            return lastModified == since
        }
        return false
    }

    /// An entity tag without `W/` and white space: the weak comparison.
    private static func opaque(_ tag: Substring) -> Substring {
        let trimmed = tag.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("W/") ? Substring(trimmed.dropFirst(2)) : Substring(trimmed)
    }

    /// `date` as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`), without a DateFormatter.
    public static func httpDate(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT") ?? calendar.timeZone
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
        let day = days[((parts.weekday ?? 1) - 1) % 7]
        let month = months[((parts.month ?? 1) - 1) % 12]
        return "\(day), \(two(parts.day)) \(month) \(parts.year ?? 1970) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
    }
}

/// A clock a test moves by hand, for a provider's `now:` and an ``AuthInterceptor``'s.
///
/// ```swift
/// let clock = ManualClock()
/// let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now)
/// clock.advance(by: 61)   // every entry with max-age=60 is stale now
/// ```
public final class ManualClock: Sendable {
    /// Reads the clock: pass it where a `@Sendable () -> Date` is asked for.
    public let now: @Sendable () -> Date
    private let time: Time

    /// A clock that reads `start` until moved.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        let time = Time(start)
        self.time = time
        now = { time.read() }
    }

    /// Moves the clock forward (or back, with a negative value) by `seconds`.
    public func advance(by seconds: TimeInterval) {
        time.advance(by: seconds)
    }

    private final class Time: @unchecked Sendable {
        // @unchecked: `current` is guarded by `lock`.
        private let lock = NSLock()
        private var current: Date

        init(_ start: Date) { current = start }

        func read() -> Date {
            lock.lock()
            defer { lock.unlock() }
            return current
        }

        func advance(by seconds: TimeInterval) {
            lock.lock()
            defer { lock.unlock() }
            current += seconds
        }
    }
}
