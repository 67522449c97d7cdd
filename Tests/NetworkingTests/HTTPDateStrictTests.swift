import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP dates exactly as RFC 9110 §5.6.7 defines them, and what an invalid one means to the cache
/// (RFC 9111 §4.2, §4.2.3, §5.3).
@Suite("HTTP dates: the three formats of RFC 9110 §5.6.7 and nothing else", SuiteTimeLimit.oneMinute)
struct HTTPDateStrictTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT.
    static let november6 = Date(timeIntervalSince1970: 784_111_777)
    let now = Date(timeIntervalSince1970: 1_800_000_000)   // 2027: RFC 850's "94" is 1994

    @Test(
        "the three formats parse (RFC 9110 §5.6.7), asctime's day as 2DIGIT or SP DIGIT",
        arguments: [
            "Sun, 06 Nov 1994 08:49:37 GMT",   // IMF-fixdate
            "Sunday, 06-Nov-94 08:49:37 GMT",   // rfc850-date
            "Sun Nov  6 08:49:37 1994",   // asctime-date: SP DIGIT
            "Sun Nov 06 08:49:37 1994",   // asctime-date: 2DIGIT
        ])
    func validFormats(_ text: String) {
        #expect(HTTPDate.parse(text, relativeTo: now) == Self.november6)
    }

    @Test(
        "day, month and zone names in any letter case (RFC 9111 §4.2: a cache SHOULD match them case-insensitively)",
        arguments: ["SUN, 06 NOV 1994 08:49:37 GMT", "sun, 06 nov 1994 08:49:37 gmt", "sunday, 06-nOV-94 08:49:37 Gmt", "sUN nOv  6 08:49:37 1994"])
    func letterCase(_ text: String) {
        #expect(HTTPDate.parse(text, relativeTo: now) == Self.november6)
    }

    @Test(
        "white space around the value is not part of it (RFC 9110 §5.5)",
        arguments: [" Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT \t", "\tSun Nov  6 08:49:37 1994 "])
    func surroundingWhiteSpace(_ text: String) {
        #expect(HTTPDate.parse(text, relativeTo: now) == Self.november6)
    }

    @Test("the weekday is not checked against the date: RFC 9110 §5.6.7 does not ask a recipient to")
    func weekdayNotChecked() {
        #expect(HTTPDate.parse("Mon, 06 Nov 1994 08:49:37 GMT", relativeTo: now) == Self.november6)
        #expect(HTTPDate.parse("Friday, 06-Nov-94 08:49:37 GMT", relativeTo: now) == Self.november6)
    }

    @Test("a leap second counts as the second before it (RFC 9111 §4.2: the nearest time at or before)")
    func leapSecond() {
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT") == HTTPDate.parse("Sat, 31 Dec 2016 23:59:59 GMT"))
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:59 GMT") != nil)
    }

    @Test(
        "anything but the three formats is not a date (RFC 9110 §5.6.7)",
        arguments: [
            // IMF-fixdate with extra spaces: split(separator:) used to drop the empty tokens
            "Sun,  06 Nov 1994 08:49:37 GMT", "Sun, 06  Nov 1994 08:49:37 GMT", "Sun, 06 Nov  1994 08:49:37 GMT", "Sun, 06 Nov 1994  08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37  GMT", "Sun , 06 Nov 1994 08:49:37 GMT", "Sun,\t06 Nov 1994 08:49:37 GMT",
            // punctuation
            "Sun 06 Nov 1994 08:49:37 GMT", "Sun; 06 Nov 1994 08:49:37 GMT", "Sun, 06-Nov-1994 08:49:37 GMT", "Sun, 06 Nov 1994 08.49.37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 1994 08:49:37:00 GMT",
            // two-digit year, missing leading zeros
            "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:9:37 GMT",
            "Sun, 06 Nov 1994 08:49:7 GMT", "Sun, 06 Nov 01994 08:49:37 GMT",
            // zones other than GMT (RFC 9111 §4.2: a cache SHOULD take them as invalid)
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 UT", "Sun, 06 Nov 1994 08:49:37 +0000", "Sun, 06 Nov 1994 08:49:37 GMT+1",
            "Sun, 06 Nov 1994 08:49:37 Z", "Sun, 06 Nov 1994 08:49:37",
            // names
            "Sunday, 06 Nov 1994 08:49:37 GMT", "Son, 06 Nov 1994 08:49:37 GMT", "Sun, 06 November 1994 08:49:37 GMT", "Sun, 06 Nvo 1994 08:49:37 GMT",
            // out of range
            "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:37 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
            // trailing or leading garbage
            "Sun, 06 Nov 1994 08:49:37 GMTx", "Sun, 06 Nov 1994 08:49:37 GMT junk", "xSun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
            // RFC 850
            "Sunday,  06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-94  08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sunday, 6-Nov-94 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT", "Sunday 06-Nov-94 08:49:37 GMT", "Sunday, 06 Nov 94 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 UTC",
            "Sunday, 06-Nov-94 08:49:37",
            // asctime: a one-digit day has exactly one space before it, a two-digit day none
            "Sun Nov 6 08:49:37 1994", "Sun Nov   6 08:49:37 1994", "Sun Nov  16 08:49:37 1994", "Sun  Nov  6 08:49:37 1994",
            "Sun Nov  6  08:49:37 1994", "Sun Nov  6 08:49:37  1994", "Sun Nov  6 08:49:37 94", "Sun, Nov  6 08:49:37 1994",
            "Sun Nov  6 08:49:37 1994 GMT", "Sunday Nov  6 08:49:37 1994",
            // not dates at all
            "0", "-1", "", " ", "now", "1994-11-06T08:49:37Z", "Sun, 06 Nov 1994 08:49:37 GMT\u{301}",
        ])
    func invalid(_ text: String) {
        #expect(HTTPDate.parse(text, relativeTo: now) == nil)
    }

    // MARK: What an invalid date means to the cache

    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    func provider() -> NetworkProvider {
        server.makeProvider(cache: store, now: clock.now)
    }

    @Test("an invalid Expires is already stale (RFC 9111 §5.3): the second call is not a fresh hit")
    func invalidExpiresThroughTheProvider() async throws {
        let date = clock.now()
        let valid = HTTPDate.format(date + 3_600)
        let doubleSpaced = valid.replacingOccurrences(of: ", ", with: ",  ")
        server.stub(
            .get, "/v1/invalid", .json(Profile(name: "I"), headers: ["Date": HTTPDate.format(date), "Expires": doubleSpaced, "ETag": "\"i\""]))
        server.stub(.get, "/v1/lowercase", .json(Profile(name: "L"), headers: ["Date": HTTPDate.format(date), "Expires": valid.lowercased()]))
        let provider = provider()
        for path in ["/invalid", "/lowercase"] { _ = try await provider.response(CachedEndpoint(path: path)) }
        clock.advance(by: 10)
        #expect(try await provider.response(CachedEndpoint(path: "/invalid")).report.cache != .hit)
        #expect(try await provider.response(CachedEndpoint(path: "/lowercase")).report.cache == .hit)   // RFC 9111 §4.2: names in any case
        #expect(server.requests.count == 3)
    }

    @Test("an invalid Date counts as the time the response arrived (RFC 9110 §6.6.1, RFC 9111 §4.2.3)")
    func invalidDateIsReceiptTime() async throws {
        // Read as a date, "06  Nov 1994" would make the response decades old and never fresh.
        server.stub(.get, "/v1/profile", .json(Profile(name: "D"), headers: ["Date": "Sun, 06  Nov 1994 08:49:37 GMT", "Cache-Control": "max-age=60"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 30)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .hit)
        #expect(server.requests.count == 1)
    }

    @Test("an invalid Last-Modified gives no heuristic freshness and is no validator (RFC 9111 §4.2.2, RFC 9110 §8.8.2)")
    func invalidLastModified() async throws {
        let date = clock.now()
        let weekAgo = HTTPDate.format(date - 7 * 86_400)
        let invalid = weekAgo.replacingOccurrences(of: " GMT", with: "  GMT")
        // With an ETag the response is stored (a validator), but not fresh: its only freshness would be the heuristic.
        server.stub(.get, "/v1/tagged", .json(Profile(name: "T"), headers: ["Date": HTTPDate.format(date), "Last-Modified": invalid, "ETag": "\"t\""]))
        // Without one, nothing could be reused: not stored.
        server.stub(.get, "/v1/bare", .json(Profile(name: "B"), headers: ["Date": HTTPDate.format(date), "Last-Modified": invalid]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/tagged"))
        _ = try await provider.response(CachedEndpoint(path: "/bare"))
        #expect(store.count == 1)
        clock.advance(by: 60)
        #expect(try await provider.response(CachedEndpoint(path: "/tagged")).report.cache != .hit)
        let revalidation = try #require(server.requests.last)
        #expect(revalidation.header("If-None-Match") == "\"t\"")
        #expect(revalidation.header("If-Modified-Since") == nil)   // an invalid date is not sent as a condition
    }

    @Test("the rules as pure functions: invalid Expires stale, invalid Date the receipt time, invalid Last-Modified no heuristic")
    func pureRules() throws {
        let url = URL(string: "https://api.example.com/v1/profile")!
        func entry(_ headers: [String: String]) -> CachedResponse {
            CachedResponse(url: url, statusCode: 200, headers: headers, body: Data(), requestDate: now, responseDate: now)
        }
        let valid = HTTPDate.format(now + 600)
        #expect(HTTPCaching.freshnessLifetime(of: entry(["Date": HTTPDate.format(now), "Expires": valid])) == 600)
        #expect(HTTPCaching.freshnessLifetime(of: entry(["Date": HTTPDate.format(now), "Expires": valid + " "])) == 600)
        #expect(HTTPCaching.freshnessLifetime(of: entry(["Date": HTTPDate.format(now), "Expires": valid + "x"])) == 0)
        // Date invalid: Expires minus the receipt time.
        #expect(HTTPCaching.freshnessLifetime(of: entry(["Date": "Sun,  06 Nov 1994 08:49:37 GMT", "Expires": valid])) == 600)
        #expect(HTTPCaching.currentAge(of: entry(["Date": "Sun,  06 Nov 1994 08:49:37 GMT"]), now: now + 5) == 5)
        let weekAgo = HTTPDate.format(now - 7 * 86_400)
        #expect(HTTPCaching.freshnessLifetime(of: entry(["Date": HTTPDate.format(now), "Last-Modified": weekAgo])) == 7 * 8_640)
        #expect(HTTPCaching.freshnessLifetime(of: entry(["Date": HTTPDate.format(now), "Last-Modified": "x" + weekAgo])) == 0)
        #expect(HTTPCaching.conditionalHeaders(for: entry(["Last-Modified": weekAgo])) == ["If-Modified-Since": weekAgo])
        #expect(HTTPCaching.conditionalHeaders(for: entry(["Last-Modified": "x" + weekAgo])).isEmpty)
    }
}
