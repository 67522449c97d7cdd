import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP dates at the edges: far years, leap days, RFC 850's two-digit year around its 50-year boundary,
/// bytes that are no date, and the date the cache writes in `If-Modified-Since` (RFC 9110 §5.6.7).
@Suite("HTTP dates: bounds and edges (RFC 9110 §5.6.7)")
struct HTTPDateBoundsTests {
    /// Fri, 15 Jan 2027 08:00:00 GMT.
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(
        "years far from 1970 parse to the right second: the arithmetic holds them on 32-bit Int too (watchOS arm64_32)",
        arguments: [
            ("Thu, 31 Dec 2099 23:59:59 GMT", 4_102_444_799.0), ("Fri, 01 Jan 2100 00:00:00 GMT", 4_102_444_800.0),
            ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799.0), ("Sat, 01 Jan 0000 00:00:00 GMT", -62_167_219_200.0),
            ("Fri Dec 31 23:59:59 9999", 253_402_300_799.0), ("Fri, 13 Dec 1901 20:45:51 GMT", -2_147_483_649.0),
            ("Tue, 19 Jan 2038 03:14:08 GMT", 2_147_483_648.0),
        ])
    func farYears(_ text: String, _ seconds: TimeInterval) {
        #expect(HTTPDate.parse(text, relativeTo: now) == Date(timeIntervalSince1970: seconds))
    }

    @Test("an RFC 850 date in another century, long after now: the full date, not only the year, is compared")
    func farRFC850() {
        let farFuture = Date(timeIntervalSince1970: 253_402_300_799)   // 9999
        #expect(HTTPDate.parse("Friday, 31-Dec-99 23:59:59 GMT", relativeTo: farFuture) == farFuture)
    }

    @Test(
        "February 29 exists in leap years only: 2000 and 2024, not 1900, 2023 or 2100 (RFC 9110 §5.6.7: a valid date)",
        arguments: [
            ("Tue, 29 Feb 2000 00:00:00 GMT", true), ("Thu, 29 Feb 2024 12:00:00 GMT", true), ("Thu, 29 Feb 1900 00:00:00 GMT", false),
            ("Wed, 29 Feb 2023 00:00:00 GMT", false), ("Mon, 29 Feb 2100 00:00:00 GMT", false), ("Tue Feb 29 00:00:00 2000", true),
            ("Wed Feb 29 00:00:00 2023", false), ("Tue, 30 Feb 2000 00:00:00 GMT", false),
        ])
    func leapDays(_ text: String, _ valid: Bool) {
        #expect((HTTPDate.parse(text, relativeTo: now) != nil) == valid)
    }

    @Test(
        "RFC 850's two-digit year: a date more than 50 years after now is the century before, to the second (RFC 9110 §5.6.7)",
        arguments: [
            ("Friday, 15-Jan-77 07:59:59 GMT", "Fri, 15 Jan 2077 07:59:59 GMT"),   // less than 50 years ahead
            ("Friday, 15-Jan-77 08:00:00 GMT", "Fri, 15 Jan 2077 08:00:00 GMT"),   // exactly 50 years: not more
            ("Friday, 15-Jan-77 08:00:01 GMT", "Sat, 15 Jan 1977 08:00:01 GMT"),   // more than 50 years ahead
            ("Thursday, 16-Dec-77 00:00:00 GMT", "Fri, 16 Dec 1977 00:00:00 GMT"),
            ("Thursday, 14-Jan-77 00:00:00 GMT", "Thu, 14 Jan 2077 00:00:00 GMT"),
            ("Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Monday, 01-Jan-27 00:00:00 GMT", "Fri, 01 Jan 2027 00:00:00 GMT"),
        ])
    func twoDigitYearBoundary(_ text: String, _ expected: String) {
        #expect(HTTPDate.parse(text, relativeTo: now) == HTTPDate.parse(expected, relativeTo: now))
        #expect(HTTPDate.parse(text, relativeTo: now) != nil)
    }

    @Test(
        "bytes that are no date: NUL, day 0 in asctime, more than 64 bytes of value (RFC 9110 §5.6.7)",
        arguments: [
            "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "\u{0}Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994\u{0}08:49:37 GMT", "Sun Nov  0 08:49:37 1994",
            "Sun Nov 00 08:49:37 1994", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: "x", count: 40),
            String(repeating: "x", count: 100_000),
        ])
    func notDates(_ text: String) {
        #expect(HTTPDate.parse(text, relativeTo: now) == nil)
    }

    @Test("white space around the value is trimmed before the 64-byte cap (RFC 9110 §5.5: it is not part of the value)")
    func capAfterTrimming() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        let expected = HTTPDate.parse(date, relativeTo: now)
        #expect(expected != nil)
        #expect(HTTPDate.parse(String(repeating: " ", count: 40) + date, relativeTo: now) == expected)
        #expect(HTTPDate.parse(date + String(repeating: "\t", count: 40), relativeTo: now) == expected)
        #expect(HTTPDate.parse(String(repeating: " ", count: 10_000) + date + String(repeating: " ", count: 10_000), relativeTo: now) == expected)
    }

    @Test(
        "If-Modified-Since is written as an IMF-fixdate whatever form Last-Modified came in (RFC 9110 §5.6.7: a sender generates IMF-fixdate)",
        arguments: ["Sunday, 06-Nov-94 08:49:37 GMT", "sun, 06 nov 1994 08:49:37 gmt", "Sun Nov  6 08:49:37 1994", " Sun, 06 Nov 1994 08:49:37 GMT "])
    func ifModifiedSinceIsIMFFixdate(_ lastModified: String) {
        let entry = CachedResponse(
            url: URL(string: "https://api.example.com/v1/profile")!, statusCode: 200, headers: ["Last-Modified": lastModified], body: Data(),
            requestDate: now, responseDate: now)
        #expect(HTTPCaching.conditionalHeaders(for: entry) == ["If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"])
    }
}
