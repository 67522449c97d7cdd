import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pure rules behind the cache's answers to preconditions, ranges and HEAD, fed what an app or a
/// sloppy server sends.
@Suite("Response cache: preconditions, ranges and HEAD as pure functions", SuiteTimeLimit.oneMinute)
struct CacheAnswerRulesTests {
    let url = URL(string: "https://api.example.com/v1/file")!

    func request(_ headers: [String: String], method: String = "GET") -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    @Test("RFC 9111 §4.3.2, RFC 9110 §13.1.5, §14.2: which preconditions the cache evaluates and which are the origin's")
    func classification() {
        #expect(HTTPCaching.preconditions(of: request([:])) == .none)
        #expect(HTTPCaching.preconditions(of: request(["Accept": "a", "X-Range": "b"])) == .none)
        #expect(HTTPCaching.preconditions(of: request(["if-none-match": "\"a\""])) == .evaluated)
        #expect(HTTPCaching.preconditions(of: request(["If-Modified-Since": "x"], method: "HEAD")) == .evaluated)
        #expect(HTTPCaching.preconditions(of: request(["Range": "bytes=0-1", "If-Range": "\"a\""])) == .evaluated)
        #expect(HTTPCaching.preconditions(of: request(["If-Match": "\"a\""])) == .origin)
        #expect(HTTPCaching.preconditions(of: request(["If-Unmodified-Since": "x", "If-None-Match": "\"a\""])) == .origin)
        #expect(HTTPCaching.preconditions(of: request(["If-Range": "\"a\""])) == .origin)
        #expect(HTTPCaching.preconditions(of: request(["Range": "bytes=0-1,3-4"])) == .origin)
        #expect(HTTPCaching.preconditions(of: request(["Range": "bytes=0-1"], method: "HEAD")) == .origin)
        let plain = HTTPCaching.withoutPreconditions(request(["Range": "bytes=0-1", "If-Range": "\"a\"", "If-None-Match": "\"a\"", "Accept": "a"]))
        #expect(plain.allHTTPHeaderFields == ["Accept": "a"])
    }

    @Test("RFC 9110 §14.1.1, §14.1.2: byte ranges parse and resolve against the length; invalid and unsatisfiable ones do not")
    func byteRanges() {
        #expect(ByteRange("bytes=0-4")?.bounds(length: 10) == 0...4)
        #expect(ByteRange("bytes=5-")?.bounds(length: 10) == 5...9)
        #expect(ByteRange("bytes=-4")?.bounds(length: 10) == 6...9)
        #expect(ByteRange("bytes=-40")?.bounds(length: 10) == 0...9)
        #expect(ByteRange("bytes=3-99999999999999999999999")?.bounds(length: 10) == 3...9)
        #expect(ByteRange("bytes=1-2,")?.bounds(length: 10) == 1...2)   // an empty list element does not count
        #expect(ByteRange("bytes=10-")?.bounds(length: 10) == nil)
        #expect(ByteRange("bytes=-0")?.bounds(length: 10) == nil)
        #expect(ByteRange("bytes=-3")?.bounds(length: 0) == nil)
        for invalid in ["bytes=4-3", "bytes=a-", "bytes=-", "bytes=0-1,2-3", "items=0-1", "bytes 0-1", "bytes=+1-2", "bytes=0x1-2"] {
            #expect(ByteRange(invalid) == nil, "\(invalid)")
        }
    }

    @Test("RFC 9110 §13.1.2, §8.8.3.2: If-None-Match lists, weak comparison, quotes, commas inside tags, *")
    func noneMatch() {
        #expect(HTTPCaching.noneMatchFails("\"a\", W/\"b\"", etag: "\"b\""))
        #expect(HTTPCaching.noneMatchFails("\"x,y\"", etag: "W/\"x,y\""))
        #expect(!HTTPCaching.noneMatchFails("\"x\"", etag: "\"x,y\""))
        #expect(HTTPCaching.noneMatchFails("*", etag: nil))
        #expect(!HTTPCaching.noneMatchFails("\"a\"", etag: nil))
        #expect(HTTPCaching.noneMatchFails("abc", etag: "\"abc\""))   // unquoted: compared by its text
        #expect(HTTPCaching.entityTags(in: " W/\"a\" ,, \"b\", \"open") == ["a", "b", "open"])
    }

    @Test("RFC 9110 §13.1.2: only a bare * is the wildcard; a quoted \"*\" or W/\"*\" is an entity tag like any other")
    func noneMatchWildcard() {
        #expect(HTTPCaching.noneMatchFails(" * ", etag: "\"v1\""))
        #expect(!HTTPCaching.noneMatchFails("\"*\"", etag: "\"v1\""))
        #expect(!HTTPCaching.noneMatchFails("W/\"*\"", etag: "\"v1\""))
        #expect(!HTTPCaching.noneMatchFails("\"v0\", \"*\"", etag: "\"v1\""))
        #expect(HTTPCaching.noneMatchFails("\"*\"", etag: "\"*\""))   // the tag "*" itself
    }

    @Test("RFC 9110 §14.1.2: open ranges, leading zeros, white space, positions past Int.max, an empty representation")
    func byteRangeEdges() {
        #expect(ByteRange("bytes=0-")?.bounds(length: 10) == 0...9)
        #expect(ByteRange("bytes=002-005")?.bounds(length: 10) == 2...5)
        #expect(ByteRange(" bytes = 2-5 ")?.bounds(length: 10) == 2...5)
        #expect(ByteRange("bytes=-99999999999999999999")?.bounds(length: 10) == 0...9)
        #expect(ByteRange("bytes=99999999999999999999-")?.bounds(length: 10) == nil)
        #expect(ByteRange("bytes=99999999999999999999-99999999999999999999")?.bounds(length: 10) == nil)
        #expect(ByteRange("bytes=0-")?.bounds(length: 0) == nil)
        #expect(ByteRange("bytes=2 - 5") == nil)   // no white space inside a range spec
    }

    @Test("RFC 9110 §13.1.5, §8.8.2.2: If-Range matches a strong ETag exactly, or a Last-Modified that is strong")
    func ifRange() throws {
        let strong = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: nil,
                headerFields: [
                    "ETag": "\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Date": "Sun, 06 Nov 1994 08:50:37 GMT",
                ]))
        let recent = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: nil,
                headerFields: ["ETag": "W/\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Date": "Sun, 06 Nov 1994 08:50:00 GMT"]))
        let now = Date()
        #expect(HTTPCaching.ifRangeMatches("\"v1\"", stored: strong, now: now))
        #expect(!HTTPCaching.ifRangeMatches("W/\"v1\"", stored: strong, now: now))
        #expect(!HTTPCaching.ifRangeMatches("\"v1\"", stored: recent, now: now))   // the stored tag is weak
        #expect(HTTPCaching.ifRangeMatches("Sun, 06 Nov 1994 08:49:37 GMT", stored: strong, now: now))
        #expect(!HTTPCaching.ifRangeMatches("Sun, 06 Nov 1994 08:49:37 GMT", stored: recent, now: now))   // less than 60 s before Date
        #expect(!HTTPCaching.ifRangeMatches("Sun, 06 Nov 1994 08:49:38 GMT", stored: strong, now: now))
    }

    @Test("RFC 9111 §4.3.5: a HEAD describes the stored GET when each validator it carries and its Content-Length match")
    func headDescribes() throws {
        let stored = CachedResponse(
            url: url, statusCode: 200, headers: ["ETag": "\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"], body: Data("12345".utf8),
            requestDate: Date(), responseDate: Date())
        func head(_ headers: [String: String]) throws -> HTTPURLResponse {
            try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: headers))
        }
        #expect(HTTPCaching.headDescribes(try head([:]), stored: stored) == nil)   // nothing to compare (RFC 9111 §4.3.5)
        #expect(HTTPCaching.headDescribes(try head(["Cache-Control": "max-age=60"]), stored: stored) == nil)
        #expect(HTTPCaching.headDescribes(try head(["ETag": "\"v1\"", "Content-Length": "5"]), stored: stored) == true)
        #expect(HTTPCaching.headDescribes(try head(["Content-Length": "5"]), stored: stored) == true)
        #expect(HTTPCaching.headDescribes(try head(["ETag": "W/\"v1\""]), stored: stored) == false)
        #expect(HTTPCaching.headDescribes(try head(["Content-Length": "6"]), stored: stored) == false)
        #expect(HTTPCaching.headDescribes(try head(["Last-Modified": "Mon, 07 Nov 1994 08:49:37 GMT"]), stored: stored) == false)
        var decoded = stored
        decoded.headers["Content-Encoding"] = "gzip"
        #expect(HTTPCaching.headDescribes(try head(["Content-Length": "5"]), stored: decoded) == false)   // the stored length is unknown
    }
}
