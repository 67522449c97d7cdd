import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Tells which calls were background revalidations, and fires `finished` when one ends.
struct BackgroundRevalidationRecorder: EventMonitor {
    let built = Recorder<Bool>()
    let finished = Recorder<Bool>()
    let results = Recorder<CacheResult>()
    let backgroundResults = Recorder<CacheResult>()

    func requestDidBuild(_ request: URLRequest, context: RequestContext) { built.append(context.isBackgroundRevalidation) }
    func cacheDidAnswer(_ result: CacheResult, key: CacheKey, context: RequestContext) {
        (context.isBackgroundRevalidation ? backgroundResults : results).append(result)
    }
    func requestDidFinish(_ request: URLRequest, result: Result<Response, any Error>, attempts: Int, duration: TimeInterval, context: RequestContext) {
        finished.append(context.isBackgroundRevalidation)
    }
}

/// `stale-while-revalidate` (RFC 5861 §3): a stale entry within the response's window answers at once, and
/// one background revalidation per entry brings it up to date through the whole pipeline.
@Suite("Response cache: stale-while-revalidate (RFC 5861 §3)", SuiteTimeLimit.oneMinute)
struct StaleWhileRevalidateTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    func provider(policy: CachePolicy = .http, interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor] = []) -> NetworkProvider {
        server.makeProvider(interceptor: interceptor, cache: store, cachePolicy: policy, now: clock.now, monitors: monitors)
    }

    /// `/v1/profile`: `Kim`, `ETag: "v1"`, with `control`; a conditional request is counted in
    /// `revalidations` and held until `release` fires, then answered `304` fresh for `max-age=60` again (or with
    /// `revalidated`, when given).
    func stubHeld(
        control: String = "max-age=60, stale-while-revalidate=120", release: Signal, revalidations: Recorder<String>,
        revalidated: MockResponse? = nil
    ) {
        server.stub(.get, "/v1/profile") { request in
            guard let tag = request.headers["If-None-Match"] else {
                return .json(Profile(name: "Kim"), headers: ["ETag": "\"v1\"", "Cache-Control": control])
            }
            revalidations.append(tag)
            await release.wait()
            return revalidated ?? .status(304, headers: ["ETag": "\"v1\"", "Cache-Control": control])
        }
    }

    @Test("a stale entry within its stale-while-revalidate window answers at once, marked stale, while the server holds the revalidation")
    func answersAtOnceWhileServerIsHeld() async throws {
        // GIVEN an entry fresh for 60 s that may be served stale for 120 s more while it is revalidated
        let (release, revalidations) = (Signal(), Recorder<String>())
        stubHeld(release: release, revalidations: revalidations)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        _ = try await server.nextRequest(matching: .get, "/v1/profile")   // the first load
        // WHEN it is asked for 90 s later (30 s stale), and the server does not answer the revalidation
        clock.advance(by: 90)
        let response = try await provider.response(CachedEndpoint())
        // THEN the stored response answered, marked stale, with no attempt of the call's own
        #expect(response.report.cache == .staleWhileRevalidate)
        #expect(response.report.cache?.isStale == true && response.report.cache?.isFromCache == true)
        #expect(response.report.statusCodes.isEmpty)
        #expect(response.value(forHTTPHeaderField: "Age") == "90")
        #expect(try JSONDecoder().decode(Profile.self, from: response.data) == Profile(name: "Kim"))
        // AND the revalidation went out in the background, conditional on the entry's validator
        let background = try await server.nextRequest(matching: .get, "/v1/profile")
        #expect(background.headers["If-None-Match"] == "\"v1\"")
        // AND once the server answers 304, the entry is fresh again: the next call is a hit
        release.fire()
        await provider.waitForBackgroundRevalidations()
        let after = try await provider.response(CachedEndpoint())
        #expect(after.report.cache == .hit)
        #expect(revalidations.all == ["\"v1\""])
    }

    @Test("500 concurrent callers of one stale entry start exactly one background revalidation (RFC 5861 §3)")
    func oneRevalidationForManyCallers() async throws {
        let (release, revalidations) = (Signal(), Recorder<String>())
        stubHeld(release: release, revalidations: revalidations)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        // WHEN 500 callers ask at once, the revalidation held by the server all along
        let stale = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<500 { group.addTask { try await provider.response(CachedEndpoint()).report.cache == .staleWhileRevalidate } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        _ = try await server.nextRequest(matching: .get, "/v1/profile")
        _ = try await server.nextRequest(matching: .get, "/v1/profile")   // the revalidation has arrived
        // THEN every caller was answered stale at once, and the server saw one revalidation
        #expect(stale == 500)
        #expect(server.requests.count == 2)
        release.fire()
        await provider.waitForBackgroundRevalidations()
        #expect(revalidations.count == 1)
        #expect(server.requests.count == 2)
    }

    @Test("a caller whose task is cancelled does not cancel the background revalidation: the entry is updated after it")
    func callerCancellationDoesNotCancelRevalidation() async throws {
        // GIVEN a stale entry, and a server that answers its revalidation with a new version when released
        let (release, revalidations, started) = (Signal(), Recorder<String>(), Signal())
        let changed = MockResponse.json(Profile(name: "Lee"), headers: ["ETag": "\"v2\"", "Cache-Control": "max-age=60, stale-while-revalidate=120"])
        stubHeld(release: release, revalidations: revalidations, revalidated: changed)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        // WHEN a caller's task is cancelled, and it is answered stale
        let caller = Task {
            await started.wait()
            return try await provider.response(CachedEndpoint())
        }
        caller.cancel()
        started.fire()
        let answer = try await caller.value
        #expect(answer.report.cache == .staleWhileRevalidate)
        // THEN the revalidation still reaches the server and, once answered, replaces the entry
        _ = try await server.nextRequest(matching: .get, "/v1/profile")
        _ = try await server.nextRequest(matching: .get, "/v1/profile")
        release.fire()
        await provider.waitForBackgroundRevalidations()
        let after = try await provider.response(CachedEndpoint())
        #expect(after.report.cache == .hit)
        #expect(try JSONDecoder().decode(Profile.self, from: after.data) == Profile(name: "Lee"))
    }

    @Test(
        "must-revalidate or no-cache on the entry forbids serving it stale while revalidating (RFC 9111 §4.2.4, §5.2.2.2, §5.2.2.4)",
        arguments: ["must-revalidate", "no-cache"])
    func forbiddenByResponse(_ directive: String) async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120, \(directive)")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        let response = try await provider.response(CachedEndpoint())
        #expect(response.report.cache == .revalidated)   // asked the server before answering
        #expect(response.report.statusCodes == [304])
    }

    @Test(
        "a request with no-cache, max-age or min-fresh is not answered stale (RFC 9111 §5.2.1.1, §5.2.1.3, §5.2.1.4)",
        arguments: ["no-cache", "max-age=0", "max-age=1000", "min-fresh=1"])
    func forbiddenByRequest(_ control: String) async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        let response = try await provider.response(CachedEndpoint(headers: ["Cache-Control": control]))
        #expect(response.report.cache == .revalidated)
        #expect(server.requests.count == 2)
    }

    @Test("beyond its window (stale by more than N seconds) the entry is revalidated before answering (RFC 5861 §3)")
    func beyondWindow() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 60 + 121)
        let response = try await provider.response(CachedEndpoint())
        #expect(response.report.cache == .revalidated)
        #expect(response.report.statusCodes == [304])
    }

    @Test("at exactly N seconds stale the entry still answers at once: \"up to the indicated number of seconds\" (RFC 5861 §3)")
    func edgeOfWindow() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 60 + 120)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
    }

    @Test("stale-while-revalidate=0 grants nothing, even at a staleness of exactly 0: the entry is revalidated first (RFC 5861 §3)")
    func zeroWindow() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=0")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 60)
        let response = try await provider.response(CachedEndpoint())
        #expect(response.report.cache == .revalidated)
        #expect(response.report.statusCodes == [304])
    }

    @Test("a failed background revalidation leaves the entry; the next caller in the window is answered stale and starts another")
    func failedRevalidationKeepsEntry() async throws {
        let (release, revalidations) = (Signal(), Recorder<String>())
        release.fire()
        stubHeld(release: release, revalidations: revalidations, revalidated: .status(503))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        let second = try await provider.response(CachedEndpoint())
        await provider.waitForBackgroundRevalidations()
        #expect(second.report.cache == .staleWhileRevalidate)
        #expect(try JSONDecoder().decode(Profile.self, from: second.data) == Profile(name: "Kim"))
        #expect(revalidations.count == 2)
    }

    @Test("the revalidation goes through the pipeline: interceptors adapt it, and monitors see its events marked as a background revalidation")
    func pipelineAndMonitors() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let adapter = CountingAdapter()
        let recorder = BackgroundRevalidationRecorder()
        let provider = provider(interceptor: adapter, monitors: [recorder])
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        let stale = try await provider.response(CachedEndpoint())
        await provider.waitForBackgroundRevalidations()
        #expect(stale.report.cache == .staleWhileRevalidate)
        #expect(adapter.runs.count == 2)   // the first load and the background revalidation; the stale answer ran none
        #expect(resource.notModifiedResponses == 1)
        #expect(recorder.built.all.filter { $0 }.count == 1)
        #expect(recorder.finished.all.filter { $0 }.count == 1)
        #expect(recorder.results.all == [.miss, .staleWhileRevalidate])
        #expect(recorder.backgroundResults.all == [.revalidated])
    }

    @Test("under .staleIfError the window applies too; .cacheElseLoad answers stale without revalidating, as before")
    func otherPolicies() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        #expect(try await provider.response(CachedEndpoint(cachePolicy: .cacheElseLoad)).report.cache == .staleHit)
        #expect(server.requests.count == 1)
        #expect(try await provider.response(CachedEndpoint(cachePolicy: .staleIfError(upTo: 10))).report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        #expect(resource.notModifiedResponses == 1)
    }

    @Test("a background revalidation whose account signed out meanwhile stores nothing")
    func signOutDuringRevalidation() async throws {
        let (release, revalidations) = (Signal(), Recorder<String>())
        server.stub(.get, "/v1/me") { request in
            guard request.headers["If-None-Match"] != nil else {
                return .json(Profile(name: "alice"), headers: ["ETag": "\"a1\"", "Cache-Control": "private, max-age=60, stale-while-revalidate=120"])
            }
            revalidations.append("a1")
            await release.wait()
            return .json(Profile(name: "alice2"), headers: ["ETag": "\"a2\"", "Cache-Control": "private, max-age=600"])
        }
        let auth = AuthInterceptor(
            baseURL: URL(string: "https://api.example.com/v1/")!,
            store: InMemoryCredentialStore(Credential(accessToken: "alice-token", refreshToken: "r", account: "alice")), readsTokenExpiry: false
        ) { credential, _ in credential }
        let provider = provider(interceptor: auth)
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        _ = try await provider.response(me)
        clock.advance(by: 90)
        #expect(try await provider.response(me).report.cache == .staleWhileRevalidate)
        _ = try await server.nextRequest(matching: .get, "/v1/me")
        _ = try await server.nextRequest(matching: .get, "/v1/me")   // the revalidation is at the server
        try await auth.signOut()
        release.fire()
        await provider.waitForBackgroundRevalidations()
        #expect(store.count == 0)
    }

    @Test("a background revalidation answered 401 refreshes the token and is sent again, as any call (the whole pipeline)")
    func revalidationRefreshesToken() async throws {
        // GIVEN alice's stale entry, and a server that took her access token back
        server.stub(.get, "/v1/me") { request in
            if request.headers["If-None-Match"] == nil {
                return .json(Profile(name: "alice"), headers: ["ETag": "\"a1\"", "Cache-Control": "private, max-age=60, stale-while-revalidate=120"])
            }
            guard request.headers["Authorization"] == "Bearer access-1" else { return .status(401) }
            return .status(304, headers: ["ETag": "\"a1\"", "Cache-Control": "private, max-age=60, stale-while-revalidate=120"])
        }
        let refreshes = Recorder<String>()
        let auth = AuthInterceptor(
            baseURL: URL(string: "https://api.example.com/v1/")!,
            store: InMemoryCredentialStore(Credential(accessToken: "access-0", refreshToken: "refresh-0", account: "alice")), readsTokenExpiry: false
        ) { credential, _ in
            refreshes.append(credential.accessToken)
            return Credential(accessToken: "access-1", refreshToken: "refresh-1")
        }
        let recorder = BackgroundRevalidationRecorder()
        let provider = provider(interceptor: auth, monitors: [recorder])
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        _ = try await provider.response(me)
        clock.advance(by: 90)
        // WHEN a call is answered stale, and its background revalidation meets the 401
        #expect(try await provider.response(me).report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        // THEN the token was refreshed once, the revalidation sent again with the new one, and its 304 renewed the entry
        #expect(refreshes.all == ["access-0"])
        #expect(server.requests.map { $0.headers["Authorization"] } == ["Bearer access-0", "Bearer access-0", "Bearer access-1"])
        #expect(recorder.backgroundResults.all == [.revalidated])
        #expect(try await provider.response(me).report.cache == .hit)
    }
}
