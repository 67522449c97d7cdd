import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pure rules of the cache, fed what a hostile or sloppy server sends.
@Suite("Response cache: the rules as pure functions", SuiteTimeLimit.oneMinute)
struct CacheRulesTests {
    let url = URL(string: "https://api.example.com/v1/profile")!
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func entry(_ headers: [String: String], status: Int = 200, at date: Date? = nil) -> CachedResponse {
        CachedResponse(url: url, statusCode: status, headers: headers, body: Data("{}".utf8), requestDate: date ?? start, responseDate: date ?? start)
    }

    @Test(
        "Cache-Control parses case, spaces, quotes and junk without trapping",
        arguments: [
            ("MAX-AGE=60, Must-Revalidate", CacheControl.Expectation(maxAge: 60, mustRevalidate: true)),
            (#" max-age="30" ,no-cache"#, CacheControl.Expectation(maxAge: 30, noCache: true)),
            ("max-age=abc", CacheControl.Expectation(maxAge: 0)),   // invalid: stale
            ("max-age=-5", CacheControl.Expectation(maxAge: 0)),
            ("max-age=99999999999999999999999", CacheControl.Expectation(maxAge: 999_999_999_999)),
            ("no-store,,, =, private", CacheControl.Expectation(noStore: true, isPrivate: true)),
            ("", CacheControl.Expectation()),
        ])
    func cacheControl(_ header: String, _ expected: CacheControl.Expectation) {
        let control = CacheControl(header: header)
        #expect(control.maxAge == expected.maxAge)
        #expect(control.noCache == expected.noCache && control.noStore == expected.noStore)
        #expect(control.mustRevalidate == expected.mustRevalidate && control.isPrivate == expected.isPrivate)
    }

    @Test("an Expires that does not parse, or is before Date, means already stale; a request's Pragma: no-cache counts")
    func invalidExpires() {
        let request = URLRequest(url: url)
        #expect(HTTPCaching.freshnessLifetime(of: entry(["Expires": "0"])) == 0)
        #expect(HTTPCaching.freshnessLifetime(of: entry(["Expires": "Sun, 06 Nov 1994 08:49:37 GMT"])) == 0)
        #expect(!HTTPCaching.isFresh(entry(["Expires": "garbage"]), for: request, now: start))
        #expect(HTTPCaching.isFresh(entry(["Cache-Control": "max-age=60", "Pragma": "no-cache"]), for: request, now: start))   // Cache-Control wins
        // Pragma is a request header (RFC 9111 §5.4): on a response it changes nothing; on a request without
        // Cache-Control it asks for revalidation.
        #expect(HTTPCaching.isFresh(entry(["Cache-Control": "max-age=60", "Pragma": "no-cache"]), for: request, now: start))
        var pragma = request
        pragma.setValue("no-cache", forHTTPHeaderField: "Pragma")
        #expect(!HTTPCaching.isFresh(entry(["Cache-Control": "max-age=60"]), for: pragma, now: start))
        #expect(CacheControl(header: "max-age=60, max-age=120").maxAge == 0)   // two max-ages: invalid, stale
    }

    @Test("a request's max-age, min-fresh and max-stale move the line; must-revalidate ignores max-stale")
    func requestDirectives() {
        let fresh = entry(["Cache-Control": "max-age=100"])
        func request(_ control: String) -> URLRequest {
            var request = URLRequest(url: url)
            request.setValue(control, forHTTPHeaderField: "Cache-Control")
            return request
        }
        let now = start + 50
        #expect(HTTPCaching.isFresh(fresh, for: URLRequest(url: url), now: now))
        #expect(!HTTPCaching.isFresh(fresh, for: request("max-age=40"), now: now))
        #expect(!HTTPCaching.isFresh(fresh, for: request("min-fresh=60"), now: now))
        #expect(!HTTPCaching.isFresh(fresh, for: request("no-cache"), now: now))
        #expect(HTTPCaching.isFresh(fresh, for: request("max-stale=30"), now: start + 120))
        #expect(!HTTPCaching.isFresh(entry(["Cache-Control": "max-age=100, must-revalidate"]), for: request("max-stale=30"), now: start + 120))
    }

    @Test("a negative or malformed Age, and a Date in the future, never make an entry younger than its time in the cache")
    func hostileAges() {
        let request = URLRequest(url: url)
        for age in ["-100", "nan", "inf", "1e9", "12abc"] {
            let stored = entry(["Cache-Control": "max-age=60", "Age": age])
            #expect(HTTPCaching.currentAge(of: stored, now: start + 10) >= 10, "Age: \(age)")
        }
        let future = entry(["Cache-Control": "max-age=60", "Date": "Sun, 06 Nov 2095 08:49:37 GMT"])
        #expect(HTTPCaching.currentAge(of: future, now: start + 61) >= 61)
        #expect(!HTTPCaching.isFresh(future, for: request, now: start + 61))
    }

    @Test(
        "Age (RFC 9111 §5.1): a list counts as its first member (empty ones skipped, RFC 9110 §5.6.1.2), an invalid value is ignored, an overflow is 2^31 (§1.2.2)",
        arguments: [
            ("50, 50", 50.0), ("50,10", 50), (" 7 ", 7), ("abc", 0), ("-5", 0), ("5 0", 0), ("", 0), (", 50", 50), ("1.5", 0),
            ("2147483648", 2_147_483_648), ("3000000000", 2_147_483_648), ("99999999999999999999999999", 2_147_483_648),
        ])
    func ageValue(_ header: String, _ expected: TimeInterval) {
        // Dated when it arrived, with no time in transit: its current age when it arrives is its Age.
        #expect(HTTPCaching.currentAge(of: entry(["Cache-Control": "max-age=60", "Age": header]), now: start) == expected)
    }

    @Test("a 304's ETag is compared weakly; a 304 without one matches; its headers update all but the body's own")
    func notModifiedMerge() throws {
        let stored = entry(["ETag": "W/\"v1\"", "Content-Length": "2", "Content-Type": "application/json", "X-Revision": "1"])
        let notModified = try #require(
            HTTPURLResponse(url: url, statusCode: 304, httpVersion: nil, headerFields: ["ETag": "\"v1\"", "Content-Length": "0", "x-revision": "2"]))
        let other = try #require(HTTPURLResponse(url: url, statusCode: 304, httpVersion: nil, headerFields: ["ETag": "\"v2\""]))
        let bare = try #require(HTTPURLResponse(url: url, statusCode: 304, httpVersion: nil, headerFields: [:]))
        #expect(HTTPCaching.notModified(notModified, matches: stored))
        #expect(!HTTPCaching.notModified(other, matches: stored))
        #expect(HTTPCaching.notModified(bare, matches: stored))
        let updated = HTTPCaching.updated(stored, with: notModified, requestDate: start + 5, responseDate: start + 6)
        #expect(HeaderFields.value(of: "Content-Length", in: updated.headers) == "2")
        #expect(HeaderFields.value(of: "X-Revision", in: updated.headers) == "2")
        #expect(updated.headers.keys.filter { $0.lowercased() == "x-revision" }.count == 1)
        #expect(updated.responseDate == start + 6 && updated.body == stored.body)
    }

    @Test("a date a 304 lacked is written as an IMF-fixdate that parses back to the second (RFC 9110 §5.6.7)")
    func formattedDates() throws {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -5)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSinceReferenceDate: .nan)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1e300)) == "Fri, 31 Dec 9999 23:59:59 GMT")
        var date = start
        for _ in 0..<2_000 {
            date += 86_400 * 7.31
            #expect(HTTPDate.parse(HTTPDate.format(date)) == Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
        }
    }

    @Test("a 304 without Date dates the entry when it arrived; one without Age drops the 200's (RFC 9110 §6.6.1, RFC 9111 §4.3.4)")
    func notModifiedDating() throws {
        let stored = entry(["Date": HTTPDate.format(start), "Age": "50", "Cache-Control": "max-age=60"])
        let bare = try #require(HTTPURLResponse(url: url, statusCode: 304, httpVersion: nil, headerFields: [:]))
        let updated = HTTPCaching.updated(stored, with: bare, requestDate: start + 100, responseDate: start + 101)
        #expect(HeaderFields.value(of: "Date", in: updated.headers) == HTTPDate.format(start + 101))
        #expect(HeaderFields.value(of: "Age", in: updated.headers) == nil)
        #expect(HTTPCaching.currentAge(of: updated, now: start + 101) == 1)   // its time in transit
        let dated = try #require(
            HTTPURLResponse(url: url, statusCode: 304, httpVersion: nil, headerFields: ["Date": HTTPDate.format(start + 90), "Age": "5"]))
        let kept = HTTPCaching.updated(stored, with: dated, requestDate: start + 100, responseDate: start + 101)
        #expect(HeaderFields.value(of: "Date", in: kept.headers) == HTTPDate.format(start + 90))
        #expect(HeaderFields.value(of: "Age", in: kept.headers) == "5")
    }

    @Test("keys hold digests of secret query values, user names and passwords, and no fragment")
    func keysWithoutSecrets() throws {
        let url = try #require(URL(string: "https://user:pa55@api.example.com/v1/search?q=kim&access_token=t0ken&page=2#frag"))
        let key = HTTPCaching.keyURL(url)
        #expect(!key.contains("t0ken") && !key.contains("pa55") && !key.contains("user:") && !key.contains("frag"))
        #expect(key.contains("q=kim") && key.contains("page=2") && key.contains("access_token=sha256-"))
        #expect(HTTPCaching.keyURL(URL(string: "https://api.example.com/v1/a")!) == "https://api.example.com/v1/a")
    }

    @Test("header names compare without case, ASCII only")
    func headerNames() {
        #expect(HeaderFields.sameName("ETag", "etag") && HeaderFields.sameName("Cache-Control", "cache-control"))
        #expect(!HeaderFields.sameName("ETag", "ETa") && !HeaderFields.sameName("a-b", "a_b") && !HeaderFields.sameName("@", "`"))
    }
}

extension CacheControl {
    /// What a parsed header should hold, for parameterized tests.
    struct Expectation: Sendable, CustomTestStringConvertible {
        var maxAge: TimeInterval?
        var noCache = false
        var noStore = false
        var mustRevalidate = false
        var isPrivate = false
        var testDescription: String { "max-age \(maxAge.map { "\($0)" } ?? "none")" }
    }
}
