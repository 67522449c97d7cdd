import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which response headers a stored entry keeps and replays (RFC 9111 §3.1, §3.2; RFC 9110 §7.6.1).
@Suite("Response cache: headers never stored nor replayed", SuiteTimeLimit.oneMinute)
struct CacheStoredHeadersTests {
    let url = URL(string: "https://api.example.com/v1/profile")!
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Hop-by-hop fields (RFC 9110 §7.6.1), the fields a `Connection` names, and the proxy's own
    /// authentication fields (RFC 9110 §11.7), with one field that is stored.
    static let connectionHeaders: [String: String] = [
        "Connection": "keep-alive, X-Trace, x-HOP-by-hop", "X-Trace": "trace-1", "X-Hop-By-Hop": "h", "Keep-Alive": "timeout=5",
        "Proxy-Connection": "keep-alive", "TE": "trailers", "Transfer-Encoding": "chunked", "Upgrade": "h2c", "Trailer": "X-Checksum",
        "Proxy-Authenticate": "Basic realm=\"proxy\"", "Proxy-Authorization": "Basic cHJveHk6c2VjcmV0", "Proxy-Authentication-Info": "nextnonce=\"1\"",
    ]
    static let unstoredNames = Set(connectionHeaders.keys.map { $0.lowercased() })

    func storedNames(_ headers: [String: String]) -> Set<String> {
        Set(headers.keys.map { $0.lowercased() })
    }

    @Test("a stored 200 keeps none of the hop-by-hop fields nor those its Connection names (RFC 9111 §3.1, RFC 9110 §7.6.1)")
    func storing() throws {
        var headers = Self.connectionHeaders
        headers["Cache-Control"] = "max-age=60"
        headers["X-Kept"] = "1"
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
        let entry = try #require(HTTPCaching.entry(for: response, body: Data(), request: URLRequest(url: url), requestDate: start, responseDate: start))
        #expect(storedNames(entry.headers).isDisjoint(with: Self.unstoredNames), "stored: \(entry.headers.keys.sorted())")
        #expect(HeaderFields.value(of: "X-Kept", in: entry.headers) == "1")
    }

    @Test("a 304 adds none of them to the entry it updates (RFC 9111 §3.2)")
    func updating() throws {
        let entry = CachedResponse(
            url: url, statusCode: 200, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\"", "X-Kept": "1"], body: Data(), requestDate: start,
            responseDate: start)
        var headers = Self.connectionHeaders
        headers["ETag"] = "\"v1\""
        headers["X-Kept"] = "2"
        let notModified = try #require(HTTPURLResponse(url: url, statusCode: 304, httpVersion: "HTTP/1.1", headerFields: headers))
        let updated = HTTPCaching.updated(entry, with: notModified, requestDate: start + 10, responseDate: start + 11)
        #expect(storedNames(updated.headers).isDisjoint(with: Self.unstoredNames), "stored: \(updated.headers.keys.sorted())")
        #expect(HeaderFields.value(of: "X-Kept", in: updated.headers) == "2")
    }

    @Test("a field a Connection names in any case is not stored (RFC 9110 §7.6.1: options are case-insensitive)")
    func connectionOptions() throws {
        let headers = ["Connection": " , X-One ,x-two,X-THREE", "X-One": "1", "X-Two": "2", "x-three": "3", "X-Four": "4"]
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
        #expect(storedNames(HTTPCaching.storedHeaders(of: response)) == ["x-four"])
    }

    @Test("a Vary that a Connection lists is stored all the same and selects (RFC 9110 §7.6.1: an end-to-end field is no connection option)")
    func connectionListedVary() throws {
        let headers = ["Connection": "Vary", "Vary": "Foo", "Cache-Control": "max-age=60"]
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
        var request = URLRequest(url: url)
        request.setValue("1", forHTTPHeaderField: "Foo")
        let entry = try #require(HTTPCaching.entry(for: response, body: Data(), request: request, requestDate: start, responseDate: start))
        #expect(HeaderFields.value(of: "Vary", in: entry.headers) == "Foo")
        #expect(HTTPCaching.variantMatches(entry, request))
        request.setValue("2", forHTTPHeaderField: "Foo")
        #expect(!HTTPCaching.variantMatches(entry, request))
    }

    @Test(
        "a Connection that lists Cache-Control does not hide no-store: the response is not stored (RFC 9110 §7.6.1, RFC 9111 §5.2.2.5)",
        arguments: ["close, Cache-Control", "cache-control", "Keep-Alive, CACHE-CONTROL , Pragma"])
    func connectionListedNoStore(_ connection: String) throws {
        let headers = ["Connection": connection, "Cache-Control": "no-store", "Expires": "Thu, 01 Jan 2099 00:00:00 GMT", "ETag": "\"v1\""]
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
        #expect(HTTPCaching.entry(for: response, body: Data(), request: URLRequest(url: url), requestDate: start, responseDate: start) == nil)
    }

    @Test("a Connection that lists end-to-end fields (freshness, validators, the body's description) leaves them stored (RFC 9110 §7.6.1)")
    func connectionListedEndToEndFields() throws {
        let protected: [String: String] = [
            "Cache-Control": "max-age=60, must-revalidate", "Expires": "Thu, 01 Jan 2099 00:00:00 GMT", "Age": "5",
            "Date": "Fri, 15 Jan 2027 08:00:00 GMT", "ETag": "\"v1\"", "Last-Modified": "Fri, 15 Jan 2027 07:00:00 GMT", "Vary": "Accept",
            "Content-Type": "application/json", "Content-Encoding": "identity", "Content-Language": "en", "Content-Location": "/v1/profile",
            "Location": "/v1/profile", "Pragma": "no-cache",
        ]
        var headers = protected
        headers["Connection"] = protected.keys.joined(separator: ", ") + ", X-Trace"
        headers["X-Trace"] = "t"
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
        let entry = try #require(HTTPCaching.entry(for: response, body: Data(), request: URLRequest(url: url), requestDate: start, responseDate: start))
        #expect(storedNames(entry.headers) == Set(protected.keys.map { $0.lowercased() }))
        #expect(!HTTPCaching.mayServeStale(entry))   // must-revalidate still counts
        #expect(HTTPCaching.freshnessLifetime(of: entry) == 60)
    }

    @Test("a 304 whose Connection lists Cache-Control still says no-store: the entry is not kept (RFC 9111 §3.2, §5.2.2.5)")
    func connectionListedNoStoreOn304() throws {
        let entry = CachedResponse(
            url: url, statusCode: 200, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""], body: Data(), requestDate: start, responseDate: start)
        let headers = ["Connection": "close, Cache-Control", "Cache-Control": "no-store", "ETag": "\"v1\""]
        let notModified = try #require(HTTPURLResponse(url: url, statusCode: 304, httpVersion: "HTTP/1.1", headerFields: headers))
        let updated = HTTPCaching.updated(entry, with: notModified, requestDate: start + 10, responseDate: start + 11)
        #expect(!HTTPCaching.mayStore(updated, replacing: entry, for: URLRequest(url: url)))
    }

    @Test("through the provider: Connection: Cache-Control with no-store is never answered from the cache (RFC 9110 §7.6.1)")
    func connectionListedNoStoreThroughTheProvider() async throws {
        server.stub(
            .get, "/v1/profile",
            .json(Profile(name: "Kim"), headers: ["Connection": "Cache-Control", "Cache-Control": "no-store", "Expires": "Thu, 01 Jan 2099 00:00:00 GMT"]))
        let provider = server.makeProvider(cache: store, now: clock.now)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .miss)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .miss)
        #expect(server.requests.count == 2)
        #expect(store.cachedResponse(for: CacheKey(partition: nil, method: "GET", url: url.absoluteString)) == nil)
    }

    // MARK: Through the provider

    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    @Test("a hit replays none of the connection's fields, and no Set-Cookie (RFC 9111 §3.1; §7.3, RFC 6265 §3: a deliberate difference)")
    func replayed() async throws {
        var headers = Self.connectionHeaders
        headers.removeValue(forKey: "Transfer-Encoding")   // the mock's URLProtocol sends a whole body
        headers["Cache-Control"] = "max-age=600"
        headers["Set-Cookie"] = "session=cookie-secret; Path=/"
        headers["X-Kept"] = "1"
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: headers))
        let provider = server.makeProvider(cache: store, now: clock.now)
        let first = try await provider.response(CachedEndpoint())
        let hit = try await provider.response(CachedEndpoint())
        #expect(first.value(forHTTPHeaderField: "X-Trace") == "trace-1")   // the network's answer has them all
        #expect(hit.report.cache == .hit)
        let entry = try #require(store.cachedResponse(for: CacheKey(partition: nil, method: "GET", url: url.absoluteString)))
        for name in Self.unstoredNames.union(["set-cookie"]) {
            #expect(HeaderFields.value(of: name, in: entry.headers) == nil, "\(name) stored")
            #expect(hit.value(forHTTPHeaderField: name) == nil, "\(name) replayed")
        }
        #expect(hit.value(forHTTPHeaderField: "X-Kept") == "1")
        #expect(try JSONDecoder().decode(Profile.self, from: hit.data) == Profile(name: "Kim"))
    }
}
