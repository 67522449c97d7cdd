import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `CachePolicy.keepForOffline(upTo:)`: a copy of every successful answer kept whatever its caching
/// headers say, answered (marked stale) only when the server cannot answer. A deliberate, opt-in deviation
/// from RFC 9111 §3 (`no-store`) and §4.2.4 (`no-cache`, `must-revalidate`), documented in Docs/Caching.md.
@Suite("Response cache: keepForOffline", SuiteTimeLimit.oneMinute)
struct CacheKeepForOfflineTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()
    /// Spring Security's default headers: nothing an HTTP cache may keep.
    static let springHeaders = ["Cache-Control": "no-cache, no-store, max-age=0, must-revalidate", "Pragma": "no-cache", "Expires": "0"]
    static let keep = CachePolicy.keepForOffline(upTo: 3_600)

    func provider(cache: (any ResponseCache)? = nil, interceptor: (any RequestInterceptor)? = nil) -> NetworkProvider {
        server.makeProvider(interceptor: interceptor, cache: cache ?? store, now: clock.now)
    }

    func kept(_ path: String = "/profile", requiresAuthentication: Bool = false, headers: [String: String] = [:]) -> CachedEndpoint {
        CachedEndpoint(path: path, headers: headers, cachePolicy: Self.keep, requiresAuthentication: requiresAuthentication)
    }

    func name(in response: Response) throws -> String {
        try JSONDecoder().decode(Profile.self, from: response.data).name
    }

    @Test("outside an account, a no-store answer to a request the session sends its own cookies with is not kept (a cookie session's page)")
    func cookieSessionsKeepNothingTheHTTPRulesRefuse() async throws {
        // GIVEN a host of this test's own, for which the session's cookie store holds a session cookie
        let host = "cookies-\(UUID().uuidString.lowercased()).example.com"
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: Self.springHeaders))
        let provider = provider()
        let storage = try #require(provider.sessionConfiguration.httpCookieStorage)
        let cookie = try #require(
            HTTPCookie(properties: [.domain: host, .path: "/", .name: "JSESSIONID", .value: "s3cr3t", .secure: "TRUE"]))
        storage.setCookie(cookie)
        defer { storage.deleteCookie(cookie) }
        var endpoint = kept()
        endpoint.baseURL = try #require(URL(string: "https://\(host)/v1/"))
        // WHEN it is loaded under keepForOffline, THEN nothing is kept: offline, the error goes through
        #expect(try await provider.response(endpoint).report.cache == .miss)
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        await #expect(throws: NetworkError.self) { try await provider.response(endpoint) }
    }

    @Test(
        "a response that says no-store, or has no validator and no freshness, is kept and answers offline, marked stale, with no successful attempt",
        arguments: ["spring", "bare"])
    func keptDespiteNoStore(_ headers: String) async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: headers == "spring" ? Self.springHeaders : [:]))
        let provider = provider()
        #expect(try await provider.response(kept()).report.cache == .miss)
        #expect(store.count == 1)
        // Online, the kept copy answers nothing: the next call loads in full.
        #expect(try await provider.response(kept()).report.cache == .miss)
        #expect(server.requests.count == 2)
        #expect(server.requests[1].headers["If-None-Match"] == nil)
        // WHEN the device is offline half an hour later
        clock.advance(by: 1_800)
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        let offline = try await provider.response(kept())
        // THEN the kept copy answers, marked stale, and no attempt got an answer
        #expect(offline.report.cache == .staleIfError)
        #expect(offline.report.cache?.isStale == true)
        #expect(offline.report.statusCodes.allSatisfy { $0 == nil })
        #expect(try name(in: offline) == "Kim")
        #expect(offline.value(forHTTPHeaderField: "Age") == "1800")
    }

    @Test("a 5xx counts as the server not answering (RFC 5861 §4); a 404 does not", arguments: [503, 500, 404])
    func serverErrors(_ status: Int) async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: Self.springHeaders))
        let provider = provider()
        _ = try await provider.response(kept())
        server.stub(.get, "/v1/profile", .status(status))
        if status >= 500 {
            #expect(try await provider.response(kept()).report.cache == .staleIfError)
        } else {
            await #expect(throws: NetworkError.invalidStatusCode(404)) { try await provider.response(kept()) }
        }
    }

    @Test("every successful answer refreshes the kept copy, and the keep time counts from the refresh")
    func refreshedOnline() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: Self.springHeaders))
        let provider = provider()
        _ = try await provider.response(kept())
        clock.advance(by: 3_000)
        server.stub(.get, "/v1/profile", .json(Profile(name: "Lee"), headers: Self.springHeaders))
        _ = try await provider.response(kept())
        // 3_000 s after the refresh, 6_000 s after the first answer: past an hour from the first, not the second
        clock.advance(by: 3_000)
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        let offline = try await provider.response(kept())
        #expect(offline.report.cache == .staleIfError)
        #expect(try name(in: offline) == "Lee")
    }

    @Test("a copy older than the keep time never answers and is removed")
    func expires() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]))
        let provider = provider()
        _ = try await provider.response(kept())
        clock.advance(by: 3_600)
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        await #expect(throws: NetworkError.self) { try await provider.response(kept()) }
        #expect(store.count == 0)
    }

    @Test("an HTTP-cacheable answer behaves as under .http online: a fresh hit, then a revalidation (RFC 9111 §4.2, §4.3)")
    func onlineAsHTTP() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(kept())
        #expect(try await provider.response(kept()).report.cache == .hit)
        clock.advance(by: 61)
        #expect(try await provider.response(kept()).report.cache == .revalidated)
        #expect(resource.fullResponses == 1)
        #expect(resource.notModifiedResponses == 1)
        // a 304 refreshes the keep time too: 3_000 s after it, 3_061 s after the first answer, it still answers offline
        clock.advance(by: 3_000)
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        #expect(try await provider.response(kept()).report.cache == .staleIfError)
    }

    @Test("a must-revalidate or no-cache answer is kept and answers offline: the policy's deviation from RFC 9111 §4.2.4")
    func mustRevalidateIsOverridden() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60, must-revalidate", "ETag": "\"v1\""]))
        let provider = provider()
        _ = try await provider.response(kept())
        clock.advance(by: 600)
        server.stub(.get, "/v1/profile", .failure(URLError(.timedOut)))
        #expect(try await provider.response(kept()).report.cache == .staleIfError)
        // under .http the same entry lets the error through (RFC 9111 §5.2.2.2)
        await #expect(throws: NetworkError.self) { try await provider.response(CachedEndpoint()) }
    }

    @Test("a .http, .cacheOnly or .cacheElseLoad call of the same URL is never answered by a kept no-store copy (RFC 9111 §3)")
    func otherPoliciesDoNotSeeTheKeptCopy() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "no-store, max-age=600", "ETag": "\"v1\""]))
        let provider = provider()
        _ = try await provider.response(kept())
        #expect(store.count == 1)
        let http = try await provider.response(CachedEndpoint())
        #expect(http.report.cache == .miss)
        #expect(server.requests.count == 2)
        #expect(server.requests[1].headers["If-None-Match"] == nil)
        await #expect(throws: NetworkError.notCached) { try await provider.response(CachedEndpoint(cachePolicy: .cacheOnly)) }
        #expect(try await provider.response(CachedEndpoint(cachePolicy: .cacheElseLoad)).report.cache == .miss)
        // the .http answer (no-store) left the kept copy as it was: it still answers the keepForOffline call offline
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        #expect(try await provider.response(kept()).report.cache == .staleIfError)
        await #expect(throws: NetworkError.self) { try await provider.response(CachedEndpoint()) }
    }

    @Test("a HEAD is never answered from a kept GET copy the HTTP rules would not store (RFC 9111 §3, RFC 9110 §9.3.2)")
    func headIsNotAnsweredByAKeptGET() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "no-store, max-age=600", "ETag": "\"v1\""]))
        server.stub(.head, "/v1/profile", .status(200, headers: ["Cache-Control": "no-store"]))
        let provider = provider()
        _ = try await provider.response(kept())
        let head = try await provider.response(CachedEndpoint(method: .head))
        #expect(head.report.cache == .miss)
        #expect(server.requests.map(\.method) == ["GET", "HEAD"])
    }

    @Test("only-if-cached is answered by the kept copy, as the server out of reach (RFC 9111 §5.2.1.7)")
    func onlyIfCached() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: Self.springHeaders))
        let provider = provider()
        _ = try await provider.response(kept())
        let answer = try await provider.response(kept(headers: ["Cache-Control": "only-if-cached"]))
        #expect(answer.report.cache == .staleIfError)
        #expect(server.requests.count == 1)
    }

    @Test(
        "never kept: the request's own no-store (RFC 9111 §5.2.1.5), Vary: * (RFC 9110 §12.5.5)",
        arguments: ["request no-store", "vary star"])
    func neverKept(_ scenario: String) async throws {
        let vary = scenario == "vary star" ? ["Vary": "*"] : [:]
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: Self.springHeaders.merging(vary) { $1 }))
        let provider = provider()
        _ = try await provider.response(kept(headers: scenario == "request no-store" ? ["Cache-Control": "no-store"] : [:]))
        #expect(store.count == 0)
    }

    @Test("keepForOffline(upTo: 0) keeps nothing: it is .http")
    func zeroKeepsNothing() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60"]))
        let provider = provider()
        let zero = CachedEndpoint(cachePolicy: .keepForOffline(upTo: 0))
        _ = try await provider.response(zero)
        #expect(try await provider.response(zero).report.cache == .hit)
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: Self.springHeaders))
        clock.advance(by: 61)
        _ = try await provider.response(zero)
        #expect(store.count == 0)
    }

    @Test("cachedThenFresh offline: the kept copy once, marked stale, and no error; after a stored value it showed, nothing more")
    func cachedThenFreshOffline() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: Self.springHeaders))
        let provider = provider()
        _ = try await provider.response(kept())
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        var updates: [CachedOrFresh<Profile>] = []
        for try await update in provider.cachedThenFresh(kept(), as: Profile.self) { updates.append(update) }
        #expect(updates.map(\.value) == [Profile(name: "Kim")])
        #expect(updates.allSatisfy { $0.isFromCache && $0.isStale })
        // an entry the HTTP rules allow is shown first (stale), and offline nothing follows it, and no error
        server.stub(.get, "/v1/other", .json(Profile(name: "Lee"), headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]))
        _ = try await provider.response(kept("/other"))
        clock.advance(by: 120)
        server.stub(.get, "/v1/other", .failure(URLError(.notConnectedToInternet)))
        var others: [CachedOrFresh<Profile>] = []
        for try await update in provider.cachedThenFresh(kept("/other"), as: Profile.self) { others.append(update) }
        #expect(others.map(\.value) == [Profile(name: "Lee")])
        #expect(others.allSatisfy { $0.isFromCache && $0.isStale })
    }

    @Test("an account's copy is in its partition, another account never gets it, and sign-out removes it")
    func accounts() async throws {
        server.stub(.get, "/v1/me") { request in .json(Profile(name: request.headers["Authorization"] ?? "anonymous"), headers: Self.springHeaders) }
        let recording = RecordingCache()
        let auth = AuthInterceptor(
            baseURL: URL(string: "https://api.example.com/v1/")!,
            store: InMemoryCredentialStore(Credential(accessToken: "alice-token", refreshToken: "r", account: "alice")), readsTokenExpiry: false
        ) { credential, _ in credential }
        let provider = provider(cache: recording, interceptor: auth)
        _ = try await provider.response(kept("/me", requiresAuthentication: true))
        #expect(recording.everything.map(\.0.partition) == [CacheKey.partition(forAccount: "alice")])
        // bob, offline, never sees alice's copy
        try await auth.signIn(with: Credential(accessToken: "bob-token", refreshToken: "r", account: "bob"))
        #expect(recording.inner.count == 0)   // signing in as another account cleared alice's
        server.stub(.get, "/v1/me", .failure(URLError(.notConnectedToInternet)))
        await #expect(throws: NetworkError.self) { try await provider.response(kept("/me", requiresAuthentication: true)) }
        // bob's own copy goes with his sign-out
        server.stub(.get, "/v1/me") { request in .json(Profile(name: request.headers["Authorization"] ?? "anonymous"), headers: Self.springHeaders) }
        _ = try await provider.response(kept("/me", requiresAuthentication: true))
        #expect(recording.inner.count == 1)
        try await auth.signOut()
        #expect(recording.inner.count == 0)
    }

    @Test("an authenticated call without an account is never kept")
    func noAccountNeverKept() async throws {
        server.stub(.get, "/v1/me", .json(Profile(name: "Kim"), headers: Self.springHeaders))
        let auth = AuthInterceptor(
            baseURL: URL(string: "https://api.example.com/v1/")!,
            store: InMemoryCredentialStore(Credential(accessToken: "token", refreshToken: "r")), readsTokenExpiry: false
        ) { credential, _ in credential }
        let noAccount = provider(interceptor: auth)
        _ = try await noAccount.response(kept("/me", requiresAuthentication: true))
        #expect(store.count == 0)
        let ownHeader = provider(interceptor: HeaderAdapter(name: "Authorization", value: "Bearer static-key"))
        _ = try await ownHeader.response(kept("/me"))
        #expect(store.count == 0)
    }

    @Test("through a DiskResponseCache: the copy is on disk, marked kept, and answers offline")
    func onDisk() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: Self.springHeaders))
        let provider = provider(cache: DiskResponseCache(directory: folder))
        _ = try await provider.response(kept())
        let fresh = DiskResponseCache(directory: folder)
        let key = CacheKey(partition: nil, method: "GET", url: "https://api.example.com/v1/profile")
        let entry = try #require(await fresh.cachedResponse(for: key))
        #expect(entry.keptUntil == clock.now().addingTimeInterval(3_600))
        server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        #expect(try await provider.response(kept()).report.cache == .staleIfError)
    }
}
