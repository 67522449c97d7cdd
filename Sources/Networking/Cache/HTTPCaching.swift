import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The rules of a private HTTP cache (RFC 9111) as pure functions: what may be stored, how fresh an
/// entry is, how to revalidate it, and how a `304` updates it. The provider applies them
/// (`NetworkProvider+Cache.swift`); nothing here does I/O.
enum HTTPCaching {
    /// Statuses a response may be stored with when it says nothing about freshness (RFC 9110 §15.1's
    /// "heuristically cacheable" list, without 206: partial content is never stored).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]
    /// Heuristic freshness: this share of the time since `Last-Modified`...
    static let heuristicFraction = 0.1
    /// ...at most a day.
    static let heuristicLimit: TimeInterval = 86_400
    /// Query parameters that sign or authorize a URL (S3, Google Cloud Storage, Azure SAS, CloudFront, API
    /// keys), kept as digests in keys and on disk whatever redactor the app gives its logs, in lowercase.
    static let signingQueryNames: Set<String> = Set(Redactor.defaultSignedURLQueryNames.map { $0.lowercased() })
    // MARK: Storing

    /// The entry to store for `response` to `request` (the request as the endpoint built it), or `nil`
    /// when the rules forbid storing it or nothing could ever be reused from it. `keep`: the seconds of
    /// ``CachePolicy/keepForOffline(upTo:)``, which stores a 2xx response (not a 206) whatever its own
    /// caching headers say, marked kept until `responseDate` plus `keep` (``CachedResponse/keptUntil``).
    static func entry(
        for response: HTTPURLResponse, body: Data, request: URLRequest, requestDate: Date, responseDate: Date,
        sessionAddsCookies: @autoclosure () -> Bool = true, keep: TimeInterval? = nil
    ) -> CachedResponse? {
        let method = request.httpMethod ?? "GET"
        guard method == "GET" || method == "HEAD", let url = response.url ?? request.url else { return nil }
        let requestControl = CacheControl(header: request.value(forHTTPHeaderField: "Cache-Control"))
        // Every decision from the headers as received (a Connection cannot hide an end-to-end field).
        var received: [String: String] = [:]
        for (name, value) in response.allHeaderFields { received["\(name)"] = "\(value)" }
        guard !requestControl.noStore, response.statusCode != 206, response.statusCode != 304 else { return nil }
        let varyNames = self.varyNames(in: received)
        guard mayVary(on: varyNames, sessionAddsCookies: sessionAddsCookies) else { return nil }   // could never match, or not safely
        let kept = keep.map { _ in (200..<300).contains(response.statusCode) } ?? false
        guard kept || allowsStoring(status: response.statusCode, headers: received, responseDate: responseDate) else { return nil }
        guard let storedURL = URL(string: keyURL(url)) else { return nil }   // never the URL with its secrets
        var entry = CachedResponse(
            url: storedURL, statusCode: response.statusCode, headers: storedHeaders(of: response), body: body, requestDate: requestDate,
            responseDate: responseDate, variantHeaders: variantHeaders(varyNames, of: request))
        if let keep { entry.keptUntil = responseDate.addingTimeInterval(keep) }
        return entry
    }

    /// Whether the HTTP rules let a response with `status` and `headers` be stored, the request aside: no
    /// `no-store` (RFC 9111 §3, §5.2.2.5), and an explicit freshness (`max-age`, `Expires`), or a
    /// heuristically cacheable status with a validator (without either, nothing could ever be reused).
    static func allowsStoring(status: Int, headers: [String: String], responseDate: Date) -> Bool {
        let control = CacheControl(header: HeaderFields.value(of: "Cache-Control", in: headers))
        guard !control.noStore else { return false }
        let explicit = control.maxAge != nil || HeaderFields.value(of: "Expires", in: headers) != nil
        if explicit { return (200..<600).contains(status) }
        let validated = HeaderFields.value(of: "ETag", in: headers) != nil || lastModified(in: headers, relativeTo: responseDate) != nil
        return heuristicallyCacheable.contains(status) && validated
    }

    /// Whether `updated`, `entry` updated by a 304, may still be stored: not when the 304 said
    /// `no-store`, nor when the request did, nor when its `Vary` names other fields than the stored one
    /// (RFC 9111 §4.1: the values kept for selecting are those of the fields the stored `Vary` named).
    /// `keeps`: under ``CachePolicy/keepForOffline(upTo:)``, the 304's `no-store` does not count.
    static func mayStore(_ updated: CachedResponse, replacing entry: CachedResponse, for request: URLRequest, keeps: Bool = false) -> Bool {
        (keeps || !CacheControl(header: HeaderFields.value(of: "Cache-Control", in: updated.headers)).noStore)
            && !CacheControl(header: request.value(forHTTPHeaderField: "Cache-Control")).noStore
            && Set(varyNames(in: updated.headers)) == Set(varyNames(in: entry.headers))
    }

    // MARK: Freshness

    /// How long `entry` stays fresh after it was generated (RFC 9111 §4.2.1): `max-age`, else `Expires`
    /// minus `Date`, else for a heuristically cacheable status a tenth of the time since `Last-Modified`
    /// (at most ``heuristicLimit``), else 0.
    static func freshnessLifetime(of entry: CachedResponse) -> TimeInterval {
        freshnessLifetime(of: entry, control: CacheControl(header: HeaderFields.value(of: "Cache-Control", in: entry.headers)), date: dateValue(of: entry))
    }

    /// ``freshnessLifetime(of:)`` with the entry's `Cache-Control` and `Date` already read.
    private static func freshnessLifetime(of entry: CachedResponse, control: CacheControl, date: Date) -> TimeInterval {
        if let maxAge = control.maxAge { return maxAge }
        if let expires = HeaderFields.value(of: "Expires", in: entry.headers) {
            guard let expiry = HTTPDate.parse(expires, relativeTo: entry.responseDate) else { return 0 }   // invalid: already expired
            return max(0, expiry.timeIntervalSince(date))
        }
        guard heuristicallyCacheable.contains(entry.statusCode), let modified = HeaderFields.value(of: "Last-Modified", in: entry.headers),
            let lastModified = HTTPDate.parse(modified, relativeTo: entry.responseDate)
        else { return 0 }
        return min(max(0, date.timeIntervalSince(lastModified)) * heuristicFraction, heuristicLimit)
    }

    /// How old `entry` is at `now` (RFC 9111 §4.2.3): its `Age` when stored, corrected for the time the
    /// response took and any clock difference, plus the time since it arrived.
    static func currentAge(of entry: CachedResponse, now: Date) -> TimeInterval {
        currentAge(of: entry, now: now, date: dateValue(of: entry))
    }

    /// ``currentAge(of:now:)`` with the entry's `Date` already read.
    private static func currentAge(of entry: CachedResponse, now: Date, date: Date) -> TimeInterval {
        let apparentAge = max(0, entry.responseDate.timeIntervalSince(date))
        let responseDelay = max(0, entry.responseDate.timeIntervalSince(entry.requestDate))
        let ageValue = HeaderFields.value(of: "Age", in: entry.headers).flatMap(ageValue) ?? 0
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        return correctedInitialAge + max(0, now.timeIntervalSince(entry.responseDate))
    }

    /// Whether `request` says `Cache-Control: only-if-cached`: a stored response or none, never the
    /// network (RFC 9111 §5.2.1.7).
    static func onlyIfCached(_ request: URLRequest) -> Bool {
        guard let control = request.value(forHTTPHeaderField: "Cache-Control") else { return false }
        return CacheControl(header: control).onlyIfCached
    }

    /// The request's `Cache-Control` directives, or its `Pragma: no-cache` when it has no `Cache-Control`
    /// (RFC 9111 §5.4); `nil` when it has neither.
    static func requestControl(of request: URLRequest) -> CacheControl? {
        request.value(forHTTPHeaderField: "Cache-Control").map { CacheControl(header: $0) }
            ?? request.value(forHTTPHeaderField: "Pragma").map { CacheControl(header: nil, pragma: $0) }
    }

    /// Whether `entry` may answer `request` at `now` without asking the server: fresh for the response's
    /// rules (no `no-cache`) and for the request's (`no-cache`, `max-age`, `min-fresh`, `max-stale`).
    static func isFresh(_ entry: CachedResponse, for request: URLRequest, now: Date) -> Bool {
        freshness(of: entry, for: request, now: now).isFresh
    }

    /// ``isFresh(_:for:now:)`` and the entry's current age, each header read once (a hit's hot path).
    static func freshness(of entry: CachedResponse, for request: URLRequest, now: Date) -> (isFresh: Bool, age: TimeInterval) {
        let control = CacheControl(header: HeaderFields.value(of: "Cache-Control", in: entry.headers))   // Pragma is a request header (RFC 9111 §5.4)
        let date = dateValue(of: entry)
        let age = currentAge(of: entry, now: now, date: date)
        guard !control.noCache else { return (false, age) }
        var lifetime = freshnessLifetime(of: entry, control: control, date: date)
        guard let requestControl = requestControl(of: request) else { return (age < lifetime, age) }
        guard !requestControl.noCache else { return (false, age) }
        if let maxAge = requestControl.maxAge { lifetime = min(lifetime, maxAge) }
        if let minFresh = requestControl.minFresh { lifetime -= minFresh }
        if age < lifetime { return (true, age) }
        if let maxStale = requestControl.maxStale, !control.mustRevalidate { return (age < lifetime + maxStale, age) }
        return (false, age)
    }

    /// The value of an `Age` field (RFC 9111 §5.1): of a list (repeated `Age` lines folded into one), the
    /// first member; `nil`, the field ignored, when that is not delta-seconds (digits only); a value past
    /// 2^31 counts as 2^31 (RFC 9111 §1.2.2).
    static func ageValue(_ text: String) -> TimeInterval? {
        for member in text.utf8.split(separator: UInt8(ascii: ",")) {
            let digits = CacheControl.trimmed(member[...])
            guard !digits.isEmpty else { continue }   // an empty list element does not count (RFC 9110 §5.6.1.2)
            var value: Int64 = 0   // not Int: 32 bits on watchOS (arm64_32)
            for byte in digits {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = min(value * 10 + Int64(byte - 0x30), largestDeltaSeconds)
            }
            return TimeInterval(value)
        }
        return nil
    }

    /// What a delta-seconds value too large to hold counts as (RFC 9111 §1.2.2).
    static let largestDeltaSeconds: Int64 = 2_147_483_648

    /// How many seconds `entry` is past its freshness at `now` (0 while fresh).
    static func staleness(of entry: CachedResponse, now: Date) -> TimeInterval {
        max(0, currentAge(of: entry, now: now) - freshnessLifetime(of: entry))
    }

    /// Whether `entry` may be served stale at all (``CachePolicy/cacheElseLoad``, ``CachePolicy/cacheOnly``,
    /// ``CachePolicy/staleIfError(upTo:)``): not when its response said `must-revalidate` (RFC 9111
    /// §5.2.2.2: not even when the server cannot be reached) or `no-cache` (§5.2.2.4: never used without
    /// validation), RFC 9111 §4.2.4.
    static func mayServeStale(_ entry: CachedResponse) -> Bool {
        let control = CacheControl(header: HeaderFields.value(of: "Cache-Control", in: entry.headers))
        return !control.mustRevalidate && !control.noCache
    }

    // MARK: Revalidation

    /// The conditional headers that revalidate `entry` (`If-None-Match` from its `ETag`,
    /// `If-Modified-Since` from its `Last-Modified` when that is a date), or none when it has no validator.
    static func conditionalHeaders(for entry: CachedResponse) -> [String: String] {
        var headers: [String: String] = [:]
        if let etag = HeaderFields.value(of: "ETag", in: entry.headers) { headers["If-None-Match"] = etag }
        if let modified = lastModified(in: entry.headers, relativeTo: entry.responseDate) { headers["If-Modified-Since"] = modified }
        return headers
    }

    /// The `Last-Modified` date of `headers` as an IMF-fixdate, whatever form it came in (RFC 9110
    /// §5.6.7: a sender generates that form), when it is an HTTP date (RFC 9110 §8.8.2); an invalid one is
    /// no validator (RFC 9110 §13.1.3: a server ignores it in `If-Modified-Since`). Not for `If-Range`,
    /// which must repeat the validator exactly.
    private static func lastModified(in headers: [String: String], relativeTo now: Date) -> String? {
        HeaderFields.value(of: "Last-Modified", in: headers).flatMap { HTTPDate.parse($0, relativeTo: now) }.map(HTTPDate.format)
    }

    /// Whether a `304` to a request that revalidated `entry` is about `entry`: it names no `ETag`, or one
    /// that matches the stored one by the weak comparison (RFC 9110 §8.8.3.2).
    static func notModified(_ response: HTTPURLResponse, matches entry: CachedResponse) -> Bool {
        guard let etag = response.value(forHTTPHeaderField: "ETag") else { return true }
        guard let stored = HeaderFields.value(of: "ETag", in: entry.headers) else { return false }
        return weakTag(etag) == weakTag(stored)
    }

    /// `entry` after a `304`: its headers updated with the 304's (except the body's description), URLs
    /// with their secrets digested as a 200's are, dated by this exchange (RFC 9111 §3.2, §4.3.4).
    ///
    /// A 304 without `Date` is dated when it arrived (RFC 9110 §6.6.1: a recipient with a clock adds
    /// one), and one without `Age` leaves no `Age` of the stored response behind: the entry's age counts
    /// from the 304, the response that validated it, not from the 200.
    static func updated(_ entry: CachedResponse, with notModified: HTTPURLResponse, requestDate: Date, responseDate: Date) -> CachedResponse {
        var updated = entry
        let redactor = Redactor()
        let listed = connectionOptions(of: notModified)
        var (dated, aged) = (false, false)
        for (name, value) in notModified.allHeaderFields {
            let name = "\(name)"
            let lowercased = name.lowercased()
            guard isStored(lowercased, listed: listed), !keptOn304.contains(lowercased), !redactor.hidesHeader(name) else { continue }
            dated = dated || lowercased == "date"
            aged = aged || lowercased == "age"
            replace(name, with: storedValue("\(value)", of: name), in: &updated.headers)
        }
        if !dated { replace("Date", with: HTTPDate.format(responseDate), in: &updated.headers) }
        if !aged { replace("Age", with: nil, in: &updated.headers) }
        updated.requestDate = requestDate
        updated.responseDate = responseDate
        return updated
    }

    /// Sets the header `name` (whatever the case of the one stored) to `value`, or removes it for `nil`.
    private static func replace(_ name: String, with value: String?, in headers: inout [String: String]) {
        if let existing = headers.keys.first(where: { HeaderFields.sameName($0, name) }) { headers.removeValue(forKey: existing) }
        if let value { headers[name] = value }
    }

    private static func weakTag(_ tag: String) -> Substring {
        let trimmed = tag.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : Substring(trimmed)
    }

    // MARK: Helpers

    /// `url` as a cache key: without its fragment, and with the value of every query item a default
    /// ``Redactor`` hides, and any user name or password, replaced by its SHA-256 digest.
    static func keyURL(_ url: URL) -> String {
        guard url.query != nil || url.fragment != nil || url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url.absoluteString }
        components.percentEncodedFragment = nil
        if let user = components.percentEncodedUser { components.percentEncodedUser = "sha256-" + SHA256.hex(user) }
        if let password = components.percentEncodedPassword { components.percentEncodedPassword = "sha256-" + SHA256.hex(password) }
        if let items = components.percentEncodedQueryItems, !items.isEmpty {
            let redactor = Redactor()
            components.percentEncodedQueryItems = items.map { item in
                let name = item.name.removingPercentEncoding ?? item.name
                guard let value = item.value, redactor.hidesQueryItem(named: name) || signingQueryNames.contains(name.lowercased()) else { return item }
                return URLQueryItem(name: item.name, value: "sha256-" + SHA256.hex(value))
            }
        }
        return components.string ?? "sha256-" + SHA256.hex(url.absoluteString)
    }

    /// The entry's `Date`, or when it arrived when it has none (or one that does not parse).
    private static func dateValue(of entry: CachedResponse) -> Date {
        HeaderFields.value(of: "Date", in: entry.headers).flatMap { HTTPDate.parse($0, relativeTo: entry.responseDate) } ?? entry.responseDate
    }
}
