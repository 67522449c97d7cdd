import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `200` to `HEAD` freshens or invalidates the stored `GET` response (RFC 9111 §4.3.5), and a stored
/// `GET` response answers `HEAD` (RFC 9110 §9.3.2: the same header fields, no content).
@Suite("Response cache: HEAD and the stored GET (RFC 9111 §4.3.5)", SuiteTimeLimit.oneMinute)
struct CacheHeadTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    func provider(policy: CachePolicy = .http) -> NetworkProvider {
        server.makeProvider(cache: store, cachePolicy: policy, now: clock.now)
    }

    /// Stores `GET /v1/profile` (`ETag: "v1"`, `X-Revision: 1`), fresh for `maxAge` seconds.
    func storeProfile(maxAge: Int = 60) async throws -> NetworkProvider {
        server.stub(
            .get, "/v1/profile",
            .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=\(maxAge)", "ETag": "\"v1\"", "X-Revision": "1"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        return provider
    }

    func head(policy: CachePolicy? = nil, headers: [String: String] = [:]) -> CachedEndpoint {
        CachedEndpoint(method: .head, headers: headers, cachePolicy: policy)
    }

    @Test("RFC 9111 §4.3.5, §3.2: a 200 to HEAD with the same ETag updates the stale GET entry's headers and freshness")
    func headFreshensGet() async throws {
        let provider = try await storeProfile()
        clock.advance(by: 61)
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\"", "X-Revision": "2"]))
        let head = try await provider.response(head())
        #expect(head.statusCode == 200)
        #expect(server.requests.count == 2)
        // WHEN the GET is asked for
        let get = try await provider.response(CachedEndpoint())
        // THEN the entry is fresh again, with the HEAD's headers and the stored body
        #expect(get.report.cache == .hit)
        #expect(get.value(forHTTPHeaderField: "X-Revision") == "2")
        #expect(get.value(forHTTPHeaderField: "Content-Type") == "application/json")   // kept (RFC 9111 §3.2)
        #expect(try JSONDecoder().decode(Profile.self, from: get.data) == Profile(name: "Kim"))
        #expect(server.requests.count == 2)
    }

    @Test(
        "RFC 9111 §4.3.5: a HEAD whose ETag, Last-Modified or Content-Length differs makes the stored GET stale",
        arguments: [
            ["ETag": "\"v2\""], ["ETag": "\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"], ["ETag": "\"v1\"", "Content-Length": "9999"],
        ])
    func differentRepresentation(_ headers: [String: String]) async throws {
        let provider = try await storeProfile(maxAge: 600)
        server.stub(.head, "/v1/profile", .status(200, headers: headers.merging(["Cache-Control": "max-age=600"]) { a, _ in a }))
        _ = try await provider.response(head(policy: .reload))   // the HEAD reaches the server
        let get = try await provider.response(CachedEndpoint())
        #expect(get.report.cache != .hit)
        #expect(server.requests.count == 3)
        #expect(server.requests.dropFirst(2).first?.method == "GET")
    }

    @Test("RFC 9111 §4.3.5, §5.2.2.5: a 200 to HEAD that says no-store removes the stored GET it would update")
    func noStoreHead() async throws {
        let provider = try await storeProfile(maxAge: 600)
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "no-store", "ETag": "\"v1\""]))
        _ = try await provider.response(head(policy: .reload))
        #expect(try await provider.response(CachedEndpoint()).report.cache == .miss)
        #expect(server.requests.count == 3)
    }

    @Test("RFC 9111 §4.3.5: only a 200 to HEAD updates; a 404 leaves the stored GET as it was")
    func onlyOK() async throws {
        let provider = try await storeProfile()
        clock.advance(by: 61)
        var missing = head()
        missing.acceptableStatusCodes = [404]
        server.stub(.head, "/v1/profile", .status(404, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\""]))
        _ = try await provider.response(missing)
        #expect(server.requests.count == 2)
        // kept as it was: still there for .cacheOnly, stale, with the GET's own headers
        let kept = try await provider.response(CachedEndpoint(cachePolicy: .cacheOnly))
        #expect(kept.report.cache == .staleHit)
        #expect(kept.value(forHTTPHeaderField: "X-Revision") == "1")
    }

    @Test("RFC 9111 §4.3.5: a 200 to HEAD reached through a redirect answers another URL: the stored GET stays as it was")
    func redirectedHead() async throws {
        server.stub(.get, "/v1/moved", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]))
        server.stub(.head, "/v1/moved", .status(302, headers: ["Location": "/v1/target"]))
        server.stub(.head, "/v1/target", .status(200, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\""]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/moved"))
        clock.advance(by: 61)
        let head = try await provider.response(CachedEndpoint(path: "/moved", method: .head))
        #expect(head.report.redirects.count == 1)
        // kept as it was: still there for .cacheOnly, stale
        #expect(try await provider.response(CachedEndpoint(path: "/moved", cachePolicy: .cacheOnly)).report.cache == .staleHit)
    }

    @Test("RFC 9111 §4.1, §4.3.5: only the GET variant the HEAD request would select is updated")
    func varyVariant() async throws {
        server.stub(
            .get, "/v1/profile",
            .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\"", "Vary": "Accept-Language"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(headers: ["Accept-Language": "en"]))
        clock.advance(by: 61)
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\""]))
        _ = try await provider.response(head(headers: ["Accept-Language": "fr"]))
        let get = try await provider.response(CachedEndpoint(headers: ["Accept-Language": "en"]))
        #expect(get.report.cache != .hit)
    }

    @Test("RFC 9111 §4, RFC 9110 §9.3.2: a fresh stored GET answers HEAD with its status and headers and no content")
    func getAnswersHead() async throws {
        let provider = try await storeProfile()
        let head = try await provider.response(head())
        #expect(head.statusCode == 200)
        #expect(head.data.isEmpty)
        #expect(head.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        #expect(head.value(forHTTPHeaderField: "X-Revision") == "1")
        #expect(head.report.cache == .hit)
        #expect(server.requests.count == 1)
        // a stale one does not: the HEAD goes to the server
        clock.advance(by: 61)
        server.stub(.head, "/v1/profile", .status(200, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=60"]))
        _ = try await provider.response(self.head())
        #expect(server.requests.count == 2)
        #expect(server.requests.dropFirst().first?.method == "HEAD")
    }

    @Test("HEAD with only-if-cached is answered from the stored GET; a HEAD for an account is never answered from another's GET")
    func onlyIfCachedAndAccounts() async throws {
        let provider = try await storeProfile()
        let offline = try await provider.response(head(headers: ["Cache-Control": "only-if-cached"]))
        #expect(offline.statusCode == 200 && offline.data.isEmpty)
        // an account's HEAD: the public GET entry is not its own
        let base = URL(string: "https://api.example.com/v1/")!
        let auth = AuthInterceptor(
            baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: "alice-token", refreshToken: "r", account: "alice")),
            readsTokenExpiry: false
        ) { credential, _ in credential }
        let signedIn = server.makeProvider(interceptor: auth, cache: store, now: clock.now)
        var own = head(headers: ["Cache-Control": "only-if-cached"])
        own.requiresAuthentication = true
        await #expect(throws: NetworkError.notCached) { try await signedIn.response(own) }
        #expect(server.requests.count == 1)
    }
}
