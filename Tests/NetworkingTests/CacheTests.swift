import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `GET` of the mock's `path`, with optional headers and cache policy.
struct CachedEndpoint: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "/profile"
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var queryItems: [URLQueryItem] = []
    var cachePolicy: CachePolicy?
    var requiresAuthentication = false
    var acceptableStatusCodes: Set<Int> = Set(200..<300)
}

struct Profile: Codable, Equatable, Sendable {
    var name: String
}

/// Counts the adapter runs of the calls it is given to, so a test can tell that a hit ran none.
struct CountingAdapter: RequestInterceptor {
    let runs = Recorder<String>()
    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        runs.append(request.url?.path ?? "")
        return request
    }
}

/// Records how the cache answered each call.
struct CacheRecorder: EventMonitor {
    let results = Recorder<CacheResult>()
    func cacheDidAnswer(_ result: CacheResult, key: CacheKey, context: RequestContext) { results.append(result) }
}

@Suite("Response cache: the HTTP rules through the mock", SuiteTimeLimit.oneMinute)
struct CacheTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    func provider(policy: CachePolicy = .http, interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor] = [], maximumAttempts: Int = 1)
        -> NetworkProvider
    {
        server.makeProvider(interceptor: interceptor, maximumAttempts: maximumAttempts, cache: store, cachePolicy: policy, now: clock.now, monitors: monitors)
    }

    @Test("a fresh entry answers without a request and without running any interceptor")
    func freshHitSendsNothing() async throws {
        // GIVEN a profile fresh for 60 s
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/profile", resource: resource)
        let adapter = CountingAdapter()
        let provider = provider(interceptor: adapter)
        let first = try await provider.response(CachedEndpoint())
        // WHEN it is asked for again 59 s later
        clock.advance(by: 59)
        let second = try await provider.response(CachedEndpoint())
        // THEN the server saw one request, the adapter ran once, and the second is a hit with the same body
        #expect(first.report.cache == .miss)
        #expect(second.report.cache == .hit)
        #expect(second.report.statusCodes.isEmpty)
        #expect(second.statusCode == 200)
        #expect(try JSONDecoder().decode(Profile.self, from: second.data) == Profile(name: "Kim"))
        #expect(second.value(forHTTPHeaderField: "Age") == "59")
        #expect(server.requests.count == 1)
        #expect(adapter.runs.count == 1)
    }

    @Test("a stale entry with an ETag is revalidated: the 304 gives the stored body, status 200, merged headers")
    func etagRevalidation() async throws {
        // GIVEN a stored profile with an ETag, fresh for 60 s
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60", headers: ["X-Revision": "1"])
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        // WHEN the entry is stale and the server's 304 carries new headers
        clock.advance(by: 61)
        resource.setHeader("X-Revision", to: "2")
        resource.setHeader("Cache-Control", to: "max-age=120")
        let revalidated = try await provider.request(CachedEndpoint(), as: Profile.self)
        let response = try await provider.response(CachedEndpoint())
        // THEN the request was conditional, the value is the stored one, and the 304's headers were merged
        #expect(revalidated == Profile(name: "Kim"))
        #expect(server.requests.count == 2)
        #expect(server.requests[1].headers["If-None-Match"] == "\"v1\"")
        #expect(resource.notModifiedResponses == 1 && resource.fullResponses == 1)
        #expect(response.report.cache == .hit)   // fresh again for 120 s after the 304
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "X-Revision") == "2")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test("a 304 makes the entry fresh again from that moment: the next call within max-age is a hit")
    func revalidationRenewsFreshness() async throws {
        // GIVEN an entry fresh for 60 s, revalidated once it went stale
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 61)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .revalidated)
        // WHEN asked 59 s after the 304
        clock.advance(by: 59)
        let response = try await provider.response(CachedEndpoint())
        // THEN it is a hit, 59 s old
        #expect(response.report.cache == .hit)
        #expect(response.value(forHTTPHeaderField: "Age") == "59")
        #expect(resource.notModifiedResponses == 1 && server.requests.count == 2)
    }

    @Test("revalidation by Last-Modified sends If-Modified-Since, and the report says revalidated")
    func lastModifiedRevalidation() async throws {
        let modified = Date(timeIntervalSince1970: 1_799_000_000)
        let resource = MockResource.json(Profile(name: "Kim"), lastModified: modified, cacheControl: "no-cache")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        // WHEN asked again (no-cache: every use revalidates)
        let second = try await provider.response(CachedEndpoint())
        // THEN
        #expect(server.requests.count == 2)
        #expect(server.requests[1].headers["If-Modified-Since"] == MockResource.httpDate(modified))
        #expect(second.report.cache == .revalidated)
        #expect(second.report.statusCodes == [304])
        #expect(second.statusCode == 200)
        #expect(try JSONDecoder().decode(Profile.self, from: second.data) == Profile(name: "Kim"))
    }

    @Test("a changed resource answers the conditional request with 200: the new body replaces the entry")
    func changedResourceReplacesEntry() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=10")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 11)
        resource.update(body: MockResponse.json(Profile(name: "Lee")).body, etag: "\"v2\"")
        let changed = try await provider.response(CachedEndpoint())
        let hit = try await provider.request(CachedEndpoint(), as: Profile.self)
        #expect(changed.report.cache == .miss)
        #expect(hit == Profile(name: "Lee"))
        #expect(server.requests.count == 2)
    }

    @Test("no-store is never stored; Vary: * is never stored; a 304 to a request the app made conditional is its own")
    func notStored() async throws {
        server.stub(.get, "/v1/secret", .json(Profile(name: "A"), headers: ["Cache-Control": "no-store, max-age=600", "ETag": "\"s\""]))
        server.stub(.get, "/v1/any", .json(Profile(name: "B"), headers: ["Cache-Control": "max-age=600", "Vary": "*"]))
        server.stub(.get, "/v1/own", .status(304, headers: ["ETag": "\"o\""]))
        let provider = provider()
        for path in ["/secret", "/secret", "/any", "/any"] {
            _ = try await provider.response(CachedEndpoint(path: path))
        }
        let own = try await provider.response(CachedEndpoint(path: "/own", headers: ["If-None-Match": "\"o\""], acceptableStatusCodes: [304]))
        #expect(server.requests.count == 5)
        #expect(own.statusCode == 304)
        #expect(own.report.cache == nil)
        #expect(store.count == 0)
    }

    @Test("freshness from Expires − Date, from Age, and heuristically from Last-Modified (10%, capped at a day)")
    func freshnessSources() async throws {
        let date = clock.now()
        // Expires 100 s after Date; a response that is already 50 s old (Age) with max-age 60; Last-Modified 5 days before Date.
        server.stub(
            .get, "/v1/expires",
            .json(Profile(name: "E"), headers: ["Date": MockResource.httpDate(date), "Expires": MockResource.httpDate(date + 100)]))
        server.stub(.get, "/v1/aged", .json(Profile(name: "A"), headers: ["Cache-Control": "max-age=60", "Age": "50"]))
        server.stub(
            .get, "/v1/heuristic",
            .json(Profile(name: "H"), headers: ["Date": MockResource.httpDate(date), "Last-Modified": MockResource.httpDate(date - 5 * 86_400)]))
        server.stub(
            .get, "/v1/capped",
            .json(Profile(name: "C"), headers: ["Date": MockResource.httpDate(date), "Last-Modified": MockResource.httpDate(date - 400 * 86_400)]))
        let provider = provider()
        for path in ["/expires", "/aged", "/heuristic", "/capped"] { _ = try await provider.response(CachedEndpoint(path: path)) }

        clock.advance(by: 9)   // aged: 59 s old
        #expect(try await provider.response(CachedEndpoint(path: "/aged")).report.cache == .hit)
        clock.advance(by: 2)   // aged: 61 s old
        #expect(try await provider.response(CachedEndpoint(path: "/aged")).report.cache == .miss)
        clock.advance(by: 88)   // 99 s
        #expect(try await provider.response(CachedEndpoint(path: "/expires")).report.cache == .hit)
        clock.advance(by: 2)   // 101 s
        #expect(try await provider.response(CachedEndpoint(path: "/expires")).report.cache != .hit)
        clock.advance(by: 12 * 3_600 - 200)   // just under 12 h: 10% of 5 days
        #expect(try await provider.response(CachedEndpoint(path: "/heuristic")).report.cache == .hit)
        clock.advance(by: 400)   // just over 12 h
        #expect(try await provider.response(CachedEndpoint(path: "/heuristic")).report.cache == .miss)   // revalidated: the stub answers 200
        clock.advance(by: 12 * 3_600 - 1_000)   // under a day: the cap, not 40 days
        #expect(try await provider.response(CachedEndpoint(path: "/capped")).report.cache == .hit)
        clock.advance(by: 2_000)   // over a day
        #expect(try await provider.response(CachedEndpoint(path: "/capped")).report.cache != .hit)
    }

    @Test("Vary: a request with other values of the named headers is not answered from the entry")
    func varyMatchesRequestHeaders() async throws {
        server.stub(.get, "/v1/greeting") { request in
            .json(Profile(name: request.headers["Accept-Language"] ?? "none"), headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        }
        let provider = provider()
        let korean = CachedEndpoint(path: "/greeting", headers: ["Accept-Language": "ko"])
        let english = CachedEndpoint(path: "/greeting", headers: ["Accept-Language": "en"])
        #expect(try await provider.request(korean, as: Profile.self).name == "ko")
        #expect(try await provider.request(korean, as: Profile.self).name == "ko")
        #expect(server.requests.count == 1)
        #expect(try await provider.request(english, as: Profile.self).name == "en")
        #expect(server.requests.count == 2)
    }

    @Test("a successful POST, PUT, PATCH or DELETE removes the entries of its URL and of a same-origin Location")
    func unsafeMethodsInvalidate() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=600"]))
        server.stub(.get, "/v1/other", .json(Profile(name: "O"), headers: ["Cache-Control": "max-age=600"]))
        server.stub(.get, "/v1/elsewhere", .json(Profile(name: "X"), headers: ["Cache-Control": "max-age=600"]))
        for method in [HTTPMethod.post, .put, .patch, .delete] {
            server.stub(method, "/v1/profile", .status(200, headers: ["Location": "/v1/other", "Content-Location": "https://foreign.example/v1/elsewhere"]))
        }
        server.stub(.post, "/v1/failing", .status(500))
        let provider = provider()
        for method in [HTTPMethod.post, .put, .patch, .delete] {
            for path in ["/profile", "/other"] { _ = try await provider.response(CachedEndpoint(path: path)) }
            let before = server.requests.count
            _ = try await provider.response(CachedEndpoint(method: method))
            _ = try await provider.response(CachedEndpoint(path: "/profile"))
            _ = try await provider.response(CachedEndpoint(path: "/other"))
            #expect(server.requests.count == before + 3, "\(method.rawValue): both entries were removed")
        }
        // A failed unsafe call removes nothing.
        _ = try await provider.response(CachedEndpoint(path: "/profile"))
        await #expect(throws: NetworkError.invalidStatusCode(500)) { try await provider.response(CachedEndpoint(path: "/failing", method: .post)) }
        #expect(try await provider.response(CachedEndpoint(path: "/profile")).report.cache == .hit)
    }

    @Test("policies: reload, cacheElseLoad, cacheOnly and disabled")
    func policies() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        // cacheOnly with nothing stored: a typed error, no request
        await #expect(throws: NetworkError.notCached) { try await provider.response(CachedEndpoint(cachePolicy: .cacheOnly)) }
        #expect(server.requests.isEmpty)
        // reload: always sends, stores the answer
        _ = try await provider.response(CachedEndpoint(cachePolicy: .reload))
        _ = try await provider.response(CachedEndpoint(cachePolicy: .reload))
        #expect(server.requests.count == 2)
        // stale: cacheElseLoad and cacheOnly answer with it, marked stale, without a request
        clock.advance(by: 3_600)
        let elseLoad = try await provider.response(CachedEndpoint(cachePolicy: .cacheElseLoad))
        let only = try await provider.response(CachedEndpoint(cachePolicy: .cacheOnly))
        #expect(elseLoad.report.cache == .staleHit && only.report.cache == .staleHit)
        #expect(elseLoad.report.cache?.isStale == true)
        #expect(server.requests.count == 2)
        // disabled: sends, and leaves the entry as it was
        let disabled = try await provider.response(CachedEndpoint(cachePolicy: .disabled))
        #expect(disabled.report.cache == nil)
        #expect(server.requests.count == 3)
        #expect(server.requests[2].headers["If-None-Match"] == nil)
    }

    @Test("cacheOnly on a provider without a cache fails with notCached before sending")
    func cacheOnlyWithoutCache() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim")))
        let provider = server.makeProvider()
        await #expect(throws: NetworkError.notCached) { try await provider.response(CachedEndpoint(cachePolicy: .cacheOnly)) }
        #expect(server.requests.isEmpty)
    }

    @Test(
        "stale-if-error answers a transport failure or a 5xx with an entry stale by at most N seconds, never a must-revalidate or no-cache one (RFC 9111 §4.2.4)",
        arguments: ["offline", "503", "too stale", "404", "must-revalidate", "no-cache"])
    func staleIfError(_ scenario: String) async throws {
        let control = ["must-revalidate", "no-cache"].contains(scenario) ? "max-age=60, \(scenario)" : "max-age=60"
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": control, "ETag": "\"v1\""]))
        let provider = provider(
            policy: .staleIfError(upTo: 3_600), interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0, jitter: 0), maximumAttempts: 3)
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: scenario == "too stale" ? 60 + 3_601 : 600)
        switch scenario {
        case "offline": server.stub(.get, "/v1/profile", .failure(URLError(.notConnectedToInternet)))
        case "404": server.stub(.get, "/v1/profile", .status(404))
        default: server.stub(.get, "/v1/profile", .status(503))
        }
        if scenario == "offline" || scenario == "503" {
            let response = try await provider.response(CachedEndpoint())
            #expect(response.report.cache == .staleIfError)
            #expect(response.report.cache?.isStale == true)
            #expect(try JSONDecoder().decode(Profile.self, from: response.data) == Profile(name: "Kim"))
            #expect(response.report.attempts >= 1)
        } else {
            await #expect(throws: NetworkError.self) { try await provider.response(CachedEndpoint()) }
        }
    }

    @Test("a 304 about another representation (its ETag differs) is not used: the call asks again without conditions")
    func mismatchedNotModified() async throws {
        server.stub(.get, "/v1/profile") { request in
            request.headers["If-None-Match"] != nil
                ? .status(304, headers: ["ETag": "\"other\""])
                : .json(Profile(name: "Kim"), headers: ["ETag": "\"v1\"", "Cache-Control": "no-cache"])
        }
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        let second = try await provider.response(CachedEndpoint())
        #expect(server.requests.count == 3)
        #expect(server.requests[2].headers["If-None-Match"] == nil)
        #expect(second.report.statusCodes == [304, 200])
        #expect(second.report.cache == .miss)
    }

    @Test("monitors hear how the cache answered; downloads, HEAD's own entries and redirected answers")
    func monitorsAndScope() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60"]))
        server.stub(.get, "/v1/moved", .status(302, headers: ["Location": "/v1/profile"]))
        let recorder = CacheRecorder()
        let provider = provider(monitors: [recorder])
        _ = try await provider.response(CachedEndpoint())
        _ = try await provider.response(CachedEndpoint())
        _ = try await provider.response(CachedEndpoint(path: "/moved"))   // the redirect's answer is not filed under /moved
        _ = try await provider.response(CachedEndpoint(path: "/moved"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cache-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try await provider.download(CachedEndpoint(), to: folder.appendingPathComponent("a.json"))
        await provider.waitForMonitors()
        #expect(recorder.results.all == [.miss, .hit, .miss, .miss])
        #expect(server.requests.count == 6)   // 1 + 0 + 2 + 2 + 1 (the download went to the server)
    }

    @Test("the session's URLCache is off: the configuration has none and ignores local data")
    func sessionCacheIsOff() {
        let provider = NetworkProvider(configuration: .default)
        #expect(provider.sessionConfiguration.urlCache == nil)
        #expect(provider.sessionConfiguration.requestCachePolicy == .reloadIgnoringLocalCacheData)
        let kept = NetworkProvider(configuration: .default, usesSessionURLCache: true)
        #expect(kept.sessionConfiguration.requestCachePolicy == URLSessionConfiguration.default.requestCachePolicy)
    }

    @Test("1,000 concurrent calls of one fresh entry are all hits after the first load")
    func concurrentHits() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=600"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        let hits = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<1_000 { group.addTask { try await provider.response(CachedEndpoint()).report.cache == .hit } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(hits == 1_000)
        #expect(server.requests.count == 1)
    }
}
