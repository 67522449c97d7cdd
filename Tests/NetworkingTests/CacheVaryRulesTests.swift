import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The limits of `Vary` matching (RFC 9111 §4.1): a `Cookie` the session adds, a 304 that changes `Vary`,
/// a hostile `Vary`, entries of earlier versions, quoted values.
@Suite("Response cache: Vary's limits (RFC 9111 §4.1)", SuiteTimeLimit.oneMinute)
struct CacheVaryRulesTests {
    let url = URL(string: "https://api.example.com/v1/profile")!
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func response(_ headers: [String: String], status: Int = 200) throws -> HTTPURLResponse {
        try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers))
    }

    func request(_ headers: [String: String]) -> URLRequest {
        var request = URLRequest(url: url)
        if !headers.isEmpty { request.allHTTPHeaderFields = headers }
        return request
    }

    // MARK: Cookie

    @Test("Vary: Cookie is not stored when the session may add cookies: the request as built does not show them")
    func cookieNotStoredWhenTheSessionAddsCookies() throws {
        let vary = try response(["Vary": "Cookie", "Cache-Control": "max-age=600"])
        let built = request(["Cookie": "session=a"])
        #expect(HTTPCaching.entry(for: vary, body: Data(), request: built, requestDate: start, responseDate: start, sessionAddsCookies: true) == nil)
        let entry = try #require(
            HTTPCaching.entry(for: vary, body: Data(), request: built, requestDate: start, responseDate: start, sessionAddsCookies: false))
        #expect(HTTPCaching.variantMatches(entry, built, sessionAddsCookies: false))
        #expect(!HTTPCaching.variantMatches(entry, request(["Cookie": "session=b"]), sessionAddsCookies: false))
        // An entry stored earlier (another version, or another configuration of the same disk folder) is not used.
        #expect(!HTTPCaching.variantMatches(entry, built, sessionAddsCookies: true))
    }

    @Test("through the provider: a Vary: Cookie page (Django's) stored for one user never answers the next (RFC 9111 §4.1, RFC 6265 §5.4)")
    func cookieThroughTheProvider() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/profile", .json(Profile(name: "A"), headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Encoding, Cookie"]))
        // The test kit's session has a cookie store and sets cookies, as URLSession's default does.
        let provider = server.makeProvider(cache: MemoryResponseCache())
        #expect(try await provider.response(CachedEndpoint()).report.cache == .miss)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .miss)
        #expect(server.requests.count == 2)
    }

    @Test("through the provider: with the session's cookie handling off, the request's own Cookie selects")
    func cookieWithoutSessionCookies() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/profile") { request in
            .json(Profile(name: request.headers["Cookie"] ?? "none"), headers: ["Cache-Control": "max-age=600", "Vary": "Cookie"])
        }
        let configuration = server.makeConfiguration(basedOn: .ephemeral)
        configuration.httpShouldSetCookies = false
        let provider = NetworkProvider(configuration: configuration, cache: MemoryResponseCache())
        let userA = CachedEndpoint(headers: ["Cookie": "session=a"])
        #expect(try await provider.response(userA).report.cache == .miss)
        #expect(try await provider.response(userA).report.cache == .hit)
        let userB = try await provider.response(CachedEndpoint(headers: ["Cookie": "session=b"]))
        #expect(userB.report.cache == .miss)
        #expect(try JSONDecoder().decode(Profile.self, from: userB.data) == Profile(name: "session=b"))
    }

    // MARK: A 304 that changes Vary

    @Test("a 304 whose Vary names other fields drops the entry: its stored values do not cover them (RFC 9111 §4.1, §4.3.4)")
    func notModifiedChangesVary() throws {
        let sent = request(["Accept": "application/json", "Accept-Language": "de"])
        let stored = try #require(
            HTTPCaching.entry(
                for: response(["Vary": "Accept", "Cache-Control": "max-age=60", "ETag": "\"v1\""]), body: Data(), request: sent, requestDate: start,
                responseDate: start))
        let changed = try response(["Vary": "Accept, Accept-Language", "ETag": "\"v1\""], status: 304)
        let updated = HTTPCaching.updated(stored, with: changed, requestDate: start + 10, responseDate: start + 11)
        #expect(!HTTPCaching.mayStore(updated, replacing: stored, for: sent))
        // The same names, in another case and order: kept.
        let same = try response(["vary": "ACCEPT", "ETag": "\"v1\""], status: 304)
        let kept = HTTPCaching.updated(stored, with: same, requestDate: start + 10, responseDate: start + 11)
        #expect(HTTPCaching.mayStore(kept, replacing: stored, for: sent))
        // A 304 without Vary leaves the stored one.
        let silent = try response(["ETag": "\"v1\""], status: 304)
        #expect(HTTPCaching.mayStore(HTTPCaching.updated(stored, with: silent, requestDate: start, responseDate: start), replacing: stored, for: sent))
    }

    // MARK: A hostile Vary

    @Test("a Vary naming more than 64 fields is not stored (a bound on the work of every later lookup); 64 are")
    func tooManyVaryNames() throws {
        let names = (0..<65).map { "X-Field-\($0)" }
        let many = try response(["Vary": names.joined(separator: ", "), "Cache-Control": "max-age=60"])
        #expect(HTTPCaching.entry(for: many, body: Data(), request: request([:]), requestDate: start, responseDate: start) == nil)
        let repeated = try response(["Vary": (names.dropLast() + names.dropLast()).joined(separator: ","), "Cache-Control": "max-age=60"])
        let entry = try #require(HTTPCaching.entry(for: repeated, body: Data(), request: request([:]), requestDate: start, responseDate: start))
        #expect(entry.variantHeaders.count == 64)   // a name listed twice counts once
        #expect(HTTPCaching.variantMatches(entry, request([:])))
    }

    // MARK: Entries of earlier versions, quoted values

    @Test("an entry of an earlier version (Vary stored, no values kept) does not answer a request that sends the field")
    func oldFormatEntry() throws {
        let entry = CachedResponse(
            url: url, statusCode: 200, headers: ["Vary": "Accept-Language", "Cache-Control": "max-age=60"], body: Data(), requestDate: start,
            responseDate: start)
        #expect(entry.variantHeaders.isEmpty)
        #expect(!HTTPCaching.variantMatches(entry, request(["Accept-Language": "de"])))
        #expect(HTTPCaching.variantMatches(entry, request([:])))   // absent then (nothing kept), absent now
    }

    @Test("a quoted string with an escaped quote or a comma is one member, kept exactly (RFC 9110 §5.6.4)")
    func quotedValues() {
        #expect(SelectingField.normalized(#"text/html;p="a\", b" ,  */*"#, name: "accept") == #"text/html;p="a\", b",*/*"#)
        #expect(SelectingField.normalized(#"  x="1, 2" , y  "#, name: "foo") == #"x="1, 2" , y"#)   // unknown syntax: trimmed only
        #expect(SelectingField.normalized(#""a\"b", "c""#, name: "if-none-match") == #""a\"b","c""#)
        #expect(SelectingField.normalized(#"text/html;p="a, b""#, name: "accept") != SelectingField.normalized(#"text/html;p="a,b""#, name: "accept"))
    }
}
