import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A call the app made conditional itself (`If-None-Match`, `If-Modified-Since`) is answered by the cache
/// from a fresh entry (RFC 9111 §4.3.2): `304` when the entry matches, else the stored `200`.
@Suite("Response cache: the app's own conditional requests (RFC 9111 §4.3.2)", SuiteTimeLimit.oneMinute)
struct CacheConditionalTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()
    let modified = Date(timeIntervalSince1970: 1_799_000_000)

    func provider(policy: CachePolicy = .http, interceptor: (any RequestInterceptor)? = nil) -> NetworkProvider {
        server.makeProvider(interceptor: interceptor, cache: store, cachePolicy: policy, now: clock.now)
    }

    /// An endpoint that accepts `304` as an answer, as an app that revalidates its own copy does.
    func conditional(_ headers: [String: String], path: String = "/profile") -> CachedEndpoint {
        CachedEndpoint(path: path, headers: headers, acceptableStatusCodes: Set(200..<300).union([304]))
    }

    /// Stores a profile with `ETag: "v1"` (or `etag`) and `Last-Modified`, fresh for 600 s.
    func storeProfile(etag: String = "\"v1\"", cacheControl: String = "max-age=600") async throws -> (NetworkProvider, MockResource) {
        let resource = MockResource.json(Profile(name: "Kim"), etag: etag, lastModified: modified, cacheControl: cacheControl)
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        return (provider, resource)
    }

    @Test("RFC 9111 §4.3.2: If-None-Match that names the fresh entry's ETag is answered 304 by the cache, nothing sent")
    func ifNoneMatchMatches() async throws {
        let (provider, _) = try await storeProfile()
        let response = try await provider.response(conditional(["If-None-Match": "\"v1\""]))
        #expect(response.statusCode == 304)
        #expect(response.data.isEmpty)
        #expect(response.value(forHTTPHeaderField: "ETag") == "\"v1\"")   // RFC 9110 §15.4.5: a 304 carries the ETag
        #expect(response.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(response.report.cache == .hit)
        #expect(response.report.statusCodes.isEmpty)
        #expect(server.requests.count == 1)
    }

    @Test(
        "RFC 9110 §13.1.2: If-None-Match compares weakly, a list matches by any member, * matches any stored entry",
        arguments: [
            ("W/\"v1\"", "\"v1\""), ("\"v1\"", "W/\"v1\""), ("\"v0\", \"v1\"", "\"v1\""), ("*", "\"v1\""), ("\"a\" , W/\"v1\"", "\"v1\""),
        ])
    func ifNoneMatchForms(_ condition: String, _ etag: String) async throws {
        let (provider, _) = try await storeProfile(etag: etag)
        let response = try await provider.response(conditional(["If-None-Match": condition]))
        #expect(response.statusCode == 304)
        #expect(server.requests.count == 1)
    }

    @Test("RFC 9110 §13.1.2, §13.2.2: an If-None-Match the fresh entry does not match is answered with the stored 200")
    func ifNoneMatchFails() async throws {
        let (provider, _) = try await storeProfile()
        // If-Modified-Since would say 304, but If-None-Match takes precedence (RFC 9110 §13.1.3)
        let response = try await provider.response(
            conditional(["If-None-Match": "\"v0\"", "If-Modified-Since": MockResource.httpDate(modified.addingTimeInterval(10))]))
        #expect(response.statusCode == 200)
        #expect(try JSONDecoder().decode(Profile.self, from: response.data) == Profile(name: "Kim"))
        #expect(response.report.cache == .hit)
        #expect(response.request.value(forHTTPHeaderField: "If-None-Match") == "\"v0\"")
        #expect(server.requests.count == 1)
    }

    @Test("RFC 9110 §13.1.3: If-Modified-Since at or after Last-Modified is 304; before it, the stored 200; no date, ignored")
    func ifModifiedSince() async throws {
        let (provider, _) = try await storeProfile()
        let same = try await provider.response(conditional(["If-Modified-Since": MockResource.httpDate(modified)]))
        let later = try await provider.response(conditional(["If-Modified-Since": MockResource.httpDate(modified.addingTimeInterval(60))]))
        let earlier = try await provider.response(conditional(["If-Modified-Since": MockResource.httpDate(modified.addingTimeInterval(-1))]))
        let invalid = try await provider.response(conditional(["If-Modified-Since": "yesterday"]))
        #expect(same.statusCode == 304 && later.statusCode == 304)
        #expect(same.value(forHTTPHeaderField: "Last-Modified") == MockResource.httpDate(modified))
        #expect(earlier.statusCode == 200 && !earlier.data.isEmpty)
        #expect(invalid.statusCode == 200 && !invalid.data.isEmpty)
        #expect([same, later, earlier, invalid].allSatisfy { $0.report.cache == .hit })
        #expect(server.requests.count == 1)
    }

    @Test("RFC 9111 §4.3.2: without Last-Modified, If-Modified-Since is compared with the entry's Date")
    func ifModifiedSinceByDate() async throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        server.stub(
            .get, "/v1/dated", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=600", "Date": MockResource.httpDate(date)]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/dated"))
        let same = try await provider.response(conditional(["If-Modified-Since": MockResource.httpDate(date)], path: "/dated"))
        let earlier = try await provider.response(conditional(["If-Modified-Since": MockResource.httpDate(date - 60)], path: "/dated"))
        #expect(same.statusCode == 304)
        #expect(earlier.statusCode == 200)
        #expect(server.requests.count == 1)
    }

    @Test("a cached 304 reaches the endpoint's status check as the server's would: the same error, nothing sent")
    func notModifiedIsValidatedAsTheNetworkOne() async throws {
        // GIVEN the server's own 304 to the app's conditional request, through a provider without a cache
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=600")
        server.stub(.get, "/v1/profile", resource: resource)
        let uncached = server.makeProvider(now: clock.now)
        let asked = CachedEndpoint(headers: ["If-None-Match": "\"v1\""])
        await #expect(throws: NetworkError.invalidStatusCode(304)) { try await uncached.response(asked) }
        // WHEN the cache holds the entry
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        let sent = server.requests.count
        // THEN its 304 fails the same way, without a request
        await #expect(throws: NetworkError.invalidStatusCode(304)) { try await provider.response(asked) }
        #expect(server.requests.count == sent)
    }

    @Test("RFC 9111 §4.3.2: a stale entry does not answer: the request goes as the app built it, its validators, and the entry stays")
    func staleEntryLetsTheAppRevalidate() async throws {
        let (provider, resource) = try await storeProfile(cacheControl: "max-age=60")
        clock.advance(by: 61)
        let response = try await provider.response(conditional(["If-None-Match": "\"v1\""]))
        #expect(response.statusCode == 304)   // the server's own
        #expect(server.requests.count == 2)
        #expect(server.requests.dropFirst().first?.headers["If-None-Match"] == "\"v1\"")
        #expect(server.requests.dropFirst().first?.headers["If-Modified-Since"] == nil)   // none of the cache's conditions added
        #expect(resource.notModifiedResponses == 1)
        // AND the stored entry was neither replaced nor removed: a plain call revalidates it
        #expect(try await provider.response(CachedEndpoint()).report.cache == .revalidated)
    }

    @Test("without a stored response the app's conditional request goes as built; the cache takes no part (report.cache nil)")
    func noEntry() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=600")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        let first = try await provider.response(conditional(["If-None-Match": "\"v0\""]))
        #expect(first.statusCode == 200 && first.report.cache == nil)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .miss)   // nothing was stored
        #expect(server.requests.count == 2)
    }

    @Test("RFC 9111 §4.3.2: If-Match and If-Unmodified-Since are the origin's: they bypass the cache")
    func originPreconditionsBypass() async throws {
        let (provider, _) = try await storeProfile()
        _ = try await provider.response(CachedEndpoint(headers: ["If-Match": "\"v1\""]))
        _ = try await provider.response(CachedEndpoint(headers: ["If-Unmodified-Since": MockResource.httpDate(modified)]))
        let both = try await provider.response(conditional(["If-None-Match": "\"v1\"", "If-Match": "\"v1\""]))
        #expect(both.report.cache == nil)
        #expect(server.requests.count == 4)
    }

    @Test("RFC 9111 §5.2.1.4: a request that says no-cache always asks the server: the app's conditional request goes as built")
    func revalidatingRequestSends() async throws {
        let (provider, resource) = try await storeProfile()
        let response = try await provider.response(conditional(["If-None-Match": "\"v1\"", "Cache-Control": "no-cache"]))
        #expect(response.statusCode == 304)
        #expect(resource.notModifiedResponses == 1)
        #expect(server.requests.count == 2)
    }

    @Test("only-if-cached with a conditional request: the fresh entry answers 304; none stored, notCached")
    func onlyIfCached() async throws {
        let (provider, _) = try await storeProfile()
        let offline = try await provider.response(conditional(["If-None-Match": "\"v1\"", "Cache-Control": "only-if-cached"]))
        #expect(offline.statusCode == 304)
        await #expect(throws: NetworkError.notCached) {
            try await provider.response(conditional(["If-None-Match": "\"v1\"", "Cache-Control": "only-if-cached"], path: "/other"))
        }
        #expect(server.requests.count == 1)
    }

    @Test("an account's conditional request is answered from its own entry only (RFC 9111 §4.3.2 within the account's partition)")
    func accountPartition() async throws {
        let base = URL(string: "https://api.example.com/v1/")!
        server.stub(.get, "/v1/me") { request in
            let tag = request.headers["Authorization"] == "Bearer alice-token" ? "\"alice\"" : "\"bob\""
            if request.headers["If-None-Match"] == tag { return .status(304, headers: ["ETag": tag]) }
            return .json(Profile(name: tag), headers: ["Cache-Control": "max-age=600", "ETag": tag])
        }
        let auth = AuthInterceptor(
            baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: "alice-token", refreshToken: "r", account: "alice")),
            readsTokenExpiry: false
        ) { credential, _ in credential }
        let provider = server.makeProvider(interceptor: auth, cache: store, now: clock.now)
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        _ = try await provider.response(me)
        var asked = me
        asked.headers = ["If-None-Match": "\"alice\""]
        asked.acceptableStatusCodes.insert(304)
        #expect(try await provider.response(asked).statusCode == 304)
        #expect(server.requests.count == 1)
        // WHEN bob signs in, alice's entry cannot answer his conditional request
        try await auth.signIn(with: Credential(accessToken: "bob-token", refreshToken: "r", account: "bob"))
        let bobs = try await provider.response(asked)
        #expect(bobs.statusCode == 200)
        #expect(bobs.report.cache == nil)
        #expect(server.requests.count == 2)
    }
}
