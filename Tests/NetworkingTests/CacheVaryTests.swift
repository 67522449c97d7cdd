import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `Vary` (RFC 9111 §4.1): which stored response answers which request.
@Suite("Response cache: Vary and the selecting header fields (RFC 9111 §4.1)", SuiteTimeLimit.oneMinute)
struct CacheVaryTests {
    let url = URL(string: "https://api.example.com/v1/profile")!
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// The entry stored for a `max-age=60` response with `responseHeaders` to a request with `requestHeaders`.
    func stored(_ responseHeaders: [String: String], request requestHeaders: [String: String]) throws -> CachedResponse? {
        var headers = responseHeaders
        headers["Cache-Control"] = "max-age=60"
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
        // A session that adds no cookies: these tests are about comparing values (CacheVaryCookieTests for Cookie).
        return HTTPCaching.entry(
            for: response, body: Data(), request: request(requestHeaders), requestDate: start, responseDate: start, sessionAddsCookies: false)
    }

    func request(_ headers: [String: String]) -> URLRequest {
        var request = URLRequest(url: url)
        if !headers.isEmpty { request.allHTTPHeaderFields = headers }
        return request
    }

    /// Whether a response stored with `Vary: name` for a request sending `first` answers one sending `second`.
    func matches(vary name: String, _ first: String?, _ second: String?) throws -> Bool {
        let entry = try #require(try stored(["Vary": name], request: first.map { [name: $0] } ?? [:]))
        return HTTPCaching.variantMatches(entry, request(second.map { [name: $0] } ?? [:]), sessionAddsCookies: false)
    }

    @Test("absent, empty and present are three different values, in both directions (RFC 9111 §4.1)")
    func absentEmptyPresent() throws {
        // As stored: whatever URLRequest does with an empty value, the three never answer each other.
        let requests: [String?: URLRequest] = [.some("1"): request(["Foo": "1"]), .none: request([:])]
        for kept in [nil, "", "1"] as [String?] {
            let entry = CachedResponse(
                url: url, statusCode: 200, headers: ["Vary": "Foo", "Cache-Control": "max-age=60"], body: Data(), requestDate: start,
                responseDate: start, variantHeaders: ["foo": kept])
            for (sent, request) in requests {
                #expect(HTTPCaching.variantMatches(entry, request) == (kept == sent), "kept \(String(describing: kept)), sent \(String(describing: sent))")
            }
        }
        // Through URLRequest: an empty value is a field line "Foo:" where the platform's URLRequest keeps
        // it (Foundation on Linux and Apple platforms do); one that dropped it would send no field at all.
        let keepsEmpty = request(["Foo": ""]).value(forHTTPHeaderField: "Foo") == ""
        let values: [String?] = keepsEmpty ? [nil, "", "1"] : [nil, "1"]
        for first in values {
            for second in values {
                #expect(
                    try matches(vary: "Foo", first, second) == (first == second), "stored \(String(describing: first)), asked \(String(describing: second))")
            }
        }
        if keepsEmpty { #expect(try matches(vary: "Foo", " ", "")) }   // white space around a value is not part of it (RFC 9110 §5.5)
    }

    @Test(
        "white space that the field's syntax allows is ignored (RFC 9111 §4.1, RFC 9110 §5.5, §5.6.1, §5.6.6)",
        arguments: [
            ("Foo", "1, 2", " 1, 2 \t"),   // a field of unknown syntax: around the value only (RFC 9110 §5.5)
            ("TE", "trailers, deflate;q=0.5", "trailers ,deflate;q=0.5"), ("If-None-Match", #""a", "b""#, #""a","b""#),   // lists (RFC 9110 §10.1.4, §13.1.2)
            ("Cache-Control", "no-cache,max-age=0", "no-cache, max-age=0"),   // a list (RFC 9111 §5.2)
            ("Accept-Language", "da, en-gb;q=0.8", "da,en-gb ; q=0.8"),   // weight = OWS ";" OWS "q=" qvalue (RFC 9110 §12.4.2)
            ("Accept-Language", "da, en", "da,, en"),   // empty list elements are ignored (RFC 9110 §5.6.1.2)
            ("Accept", "text/html;level=1, */*;q=0.1", "text/html ;level=1 ,*/* ;  q=0.1"),   // parameters (RFC 9110 §5.6.6)
            ("Accept-Encoding", "gzip, br;q=0.5", "gzip ,br; q=0.5"),
        ])
    func whiteSpace(_ name: String, _ first: String, _ second: String) throws {
        #expect(try matches(vary: name, first, second))
        #expect(try matches(vary: name, second, first))
    }

    @Test(
        "white space the syntax does not allow, or that is data, still tells values apart",
        arguments: [
            ("Foo", "a b", "a  b"), ("Foo", "a b", "ab"),   // inside a member of a field of unknown syntax
            ("Foo", "1,2", "1, 2"), ("X-Api-Version", "1 ,2", "1,2"),   // unknown syntax: a comma may be data (RFC 9111 §4.1)
            ("Cookie", "a=1, b=2", "a=1,b=2"),   // not a comma list: `; ` separates cookies (RFC 6265 §5.4)
            ("Foo", #""a, b""#, #""a,b""#),   // inside a quoted string (RFC 9110 §5.6.4)
            ("User-Agent", "App/1 (iOS, 17)", "App/1 (iOS,17)"),   // not a list: a comment's spaces are its text (RFC 9110 §10.1.5)
            ("Accept", "text/html;level=1", "text/html;level= 1"),   // none around a parameter's "=" (RFC 9110 §5.6.6)
        ])
    func significantWhiteSpace(_ name: String, _ first: String, _ second: String) throws {
        #expect(try !matches(vary: name, first, second))
        #expect(try !matches(vary: name, second, first))
    }

    @Test(
        "letter case is ignored where the field's values are case-insensitive (RFC 9110 §8.3.1, §8.3.2, §8.4.1, §8.5.1, §5.6.6)",
        arguments: [
            ("Accept-Language", "en-US, de;q=0.5", "EN-us, DE;Q=0.5"),
            ("Accept-Encoding", "gzip, br", "GZIP, Br"),
            ("Accept-Charset", "utf-8, iso-8859-1;q=0.5", "UTF-8, ISO-8859-1;Q=0.5"),
            ("Accept", "text/html;charset=utf-8", "Text/HTML;Charset=utf-8"),   // type, subtype, parameter name
            ("Accept", #"text/html;level="1""#, "text/html;level=1"),   // a quoted token is the token (RFC 9110 §5.6.6)
        ])
    func caseInsensitiveFields(_ name: String, _ first: String, _ second: String) throws {
        #expect(try matches(vary: name, first, second))
        #expect(try matches(vary: name, second, first))
    }

    @Test(
        "letter case counts elsewhere: fields of unknown syntax, parameter values, quoted strings; order always counts",
        arguments: [
            ("Foo", "abc", "ABC"), ("User-Agent", "App/1", "app/1"), ("Accept", "text/html;level=a", "text/html;level=A"),
            ("Accept", #"text/html;p="A b""#, #"text/html;p="a b""#),
            // Order: RFC 9110 §12.5.4 notes that some recipients take it as the order of preference.
            ("Accept-Language", "en, de", "de, en"), ("Foo", "1, 2", "2, 1"),
        ])
    func caseSensitiveValues(_ name: String, _ first: String, _ second: String) throws {
        #expect(try !matches(vary: name, first, second))
        #expect(try !matches(vary: name, second, first))
    }

    @Test("a Vary naming several fields: each must match (RFC 9111 §4.1); names in any case, repeated, on several lines")
    func severalFields() throws {
        let both = ["Foo": "1", "Bar": "abc"]
        let entry = try #require(try stored(["Vary": "foo, BAR, Foo"], request: both))
        #expect(Set(entry.variantHeaders.keys) == ["foo", "bar"])
        #expect(HTTPCaching.variantMatches(entry, request(["foo": "1", "BAR": "abc", "Other": "x"])))   // fields not named do not count
        #expect(!HTTPCaching.variantMatches(entry, request(["Foo": "2", "Bar": "abc"])))
        #expect(!HTTPCaching.variantMatches(entry, request(["Foo": "1", "Bar": "abd"])))
        #expect(!HTTPCaching.variantMatches(entry, request(["Foo": "1"])))
        // Two Vary field lines: as one list (RFC 9110 §5.3), whichever spelling each has.
        #expect(Set(HTTPCaching.varyNames(in: ["Vary": "Foo", "vary": "Bar", "VARY": " , baz "])) == ["foo", "bar", "baz"])
        #expect(HTTPCaching.varyNames(in: ["Vary": "Foo", "vary": "*"]) == ["*"])
        // Both requests without one of the named fields match (RFC 9111 §4.1: absent in both).
        let omitted = try #require(try stored(["Vary": "Foo, Bar, Baz"], request: ["Foo": "1", "Baz": "789"]))
        #expect(HTTPCaching.variantMatches(omitted, request(["Foo": "1", "Baz": "789"])))
        #expect(!HTTPCaching.variantMatches(omitted, request(["Foo": "1", "Bar": "", "Baz": "789"])))
    }

    @Test(
        "Vary: * (in any position) or a member that is not a field name never matches: not stored (RFC 9111 §4.1, RFC 9110 §12.5.5)",
        arguments: [
            ["Vary": "*"], ["Vary": "*, *"], ["Vary": ", *"], ["Vary": "Foo,*"], ["Vary": "Foo, *"], ["Vary": "Foo Bar"], ["Vary": "Foo;q=1"],
        ])
    func neverMatches(_ headers: [String: String]) throws {
        #expect(try stored(headers, request: ["Foo": "1", "Bar": "2"]) == nil)
    }

    @Test("an empty Vary names nothing: the entry answers any request")
    func emptyVary() throws {
        let entry = try #require(try stored(["Vary": " , "], request: ["Foo": "1"]))
        #expect(entry.variantHeaders.isEmpty)
        #expect(HTTPCaching.variantMatches(entry, request(["Foo": "2"])))
    }

    @Test("a hidden header (Authorization) is compared by its digest, normalised first, and never stored in the clear")
    func hiddenHeader() throws {
        let entry = try #require(try stored(["Vary": "Authorization"], request: ["Authorization": "Bearer secret-token "]))
        #expect(entry.variantHeaders["authorization"]??.contains("secret-token") == false)
        #expect(HTTPCaching.variantMatches(entry, request(["Authorization": "Bearer secret-token"])))
        #expect(!HTTPCaching.variantMatches(entry, request(["Authorization": "Bearer other-token"])))
    }

    @Test("the disk store keeps absent and empty apart (RFC 9111 §4.1)")
    func diskRoundTrip() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vary-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = DiskResponseCache(directory: folder)
        let entry = try #require(try stored(["Vary": "Foo, Bar"], request: ["Bar": ""]))
        let key = CacheKey(partition: nil, method: "GET", url: url.absoluteString)
        await disk.store(entry, for: key)
        let read = try #require(await disk.cachedResponse(for: key))
        let expected: [String: String?] = ["foo": String?.none, "bar": ""]
        #expect(read.variantHeaders == expected)
        #expect(HTTPCaching.variantMatches(read, request(["Bar": ""])))
        #expect(!HTTPCaching.variantMatches(read, request([:])))
        #expect(!HTTPCaching.variantMatches(read, request(["Foo": "", "Bar": ""])))
    }

    // MARK: Through the provider

    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    func provider() -> NetworkProvider {
        server.makeProvider(cache: store, now: clock.now)
    }

    @Test("through the provider: another case or spacing of Accept-Language hits; absent and present do not answer each other")
    func providerMatching() async throws {
        server.stub(.get, "/v1/greeting") { request in
            .json(Profile(name: request.headers["Accept-Language"] ?? "none"), headers: ["Cache-Control": "max-age=600", "Vary": "accept-LANGUAGE"])
        }
        let provider = provider()
        func call(_ language: String?) async throws -> Response {
            try await provider.response(CachedEndpoint(path: "/greeting", headers: language.map { ["Accept-Language": $0] } ?? [:]))
        }
        #expect(try await call("en-GB, de;q=0.5").report.cache == .miss)
        #expect(try await call("EN-gb,de ; Q=0.5").report.cache == .hit)
        #expect(try await call(nil).report.cache == .miss)   // absent: not the entry stored with the field
        #expect(try await call(nil).report.cache == .hit)
        #expect(try await call("en-GB, de;q=0.5").report.cache == .miss)   // present: not the entry stored without it
        #expect(server.requests.count == 3)
    }

    @Test("an unsafe method removes its URL's entry whichever variant it holds (one per URL): after a POST none answers (RFC 9111 §4.4)")
    func unsafeMethodRemovesTheStoredVariant() async throws {
        server.stub(.get, "/v1/profile") { request in
            .json(Profile(name: request.headers["Accept-Language"] ?? "none"), headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        }
        server.stub(.post, "/v1/profile", .status(204))
        let provider = provider()
        let korean = CachedEndpoint(headers: ["Accept-Language": "ko"])
        let english = CachedEndpoint(headers: ["Accept-Language": "en"])
        for endpoint in [korean, english, korean, english] { _ = try await provider.response(endpoint) }
        #expect(try await provider.response(english).report.cache == .hit)   // one variant per URL: the latest
        let key = CacheKey(partition: nil, method: "GET", url: url.absoluteString)
        #expect(store.cachedResponse(for: key) != nil)
        _ = try await provider.response(CachedEndpoint(method: .post))
        #expect(store.cachedResponse(for: key) == nil)
        let before = server.requests.count
        #expect(try await provider.response(english).report.cache == .miss)
        #expect(try await provider.response(korean).report.cache == .miss)
        #expect(server.requests.count == before + 2)
    }
}
