import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Records the monitor events of calls in order, each marked `background` when it is a background revalidation.
struct OrderedEventRecorder: EventMonitor {
    let events = Recorder<String>()

    func requestDidBuild(_ request: URLRequest, context: RequestContext) { record("build", context) }
    func cacheDidAnswer(_ result: CacheResult, key: CacheKey, context: RequestContext) { record("cache \(result)", context) }
    func requestDidFinish(_ request: URLRequest, result: Result<Response, any Error>, attempts: Int, duration: TimeInterval, context: RequestContext) {
        switch result {
        case .success: record("finish", context)
        case .failure(let error): record("failed \(error)", context)
        }
    }

    private func record(_ event: String, _ context: RequestContext) {
        events.append(context.isBackgroundRevalidation ? "background " + event : event)
    }
}

/// The background revalidation of `stale-while-revalidate` (RFC 5861 §3): tied to the entry (and account) that
/// answered, skipped when there is nothing left to revalidate, and the waiter apps' tests use.
@Suite("Response cache: the background revalidation of stale-while-revalidate (RFC 5861 §3)", SuiteTimeLimit.oneMinute)
struct BackgroundRevalidationTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()
    let base = URL(string: "https://api.example.com/v1/")!
    static let control = "private, max-age=60, stale-while-revalidate=120"

    func provider(interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor] = []) -> NetworkProvider {
        server.makeProvider(interceptor: interceptor, cache: store, now: clock.now, monitors: monitors)
    }

    func auth(_ account: String) -> AuthInterceptor {
        AuthInterceptor(
            baseURL: base, store: InMemoryCredentialStore(Credential(accessToken: "\(account)-token", refreshToken: "r", account: account)),
            readsTokenExpiry: false
        ) { credential, _ in credential }
    }

    /// `/v1/me`: the caller's `Authorization` as the name, `ETag: "me"`, fresh 60 s then served stale 120 s while
    /// revalidated; a conditional request is recorded (by its token) in `revalidations`, held until `release`
    /// fires, then answered 304.
    func stubMe(revalidations: Recorder<String>, release: Signal) {
        server.stub(.get, "/v1/me") { request in
            let token = request.headers["Authorization"] ?? "anonymous"
            guard request.headers["If-None-Match"] != nil else {
                return .json(Profile(name: token), headers: ["ETag": "\"me\"", "Cache-Control": Self.control])
            }
            revalidations.append(token)
            await release.wait()
            return .status(304, headers: ["ETag": "\"me\"", "Cache-Control": Self.control])
        }
    }

    @Test("an account switch between the stale answer and the revalidation's start: it stops, sending nothing for the new account")
    func accountSwitchBeforeStart() async throws {
        // GIVEN alice's stale entry, and background revalidations held before they start
        let (revalidations, release, start) = (Recorder<String>(), Signal(), Signal())
        release.fire()
        stubMe(revalidations: revalidations, release: release)
        let auth = auth("alice")
        let recorder = OrderedEventRecorder()
        let provider = provider(interceptor: auth, monitors: [recorder])
        provider.backgroundRevalidations.holdStarts { await start.wait() }
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        _ = try await provider.response(me)
        clock.advance(by: 90)
        #expect(try await provider.response(me).report.cache == .staleWhileRevalidate)
        // WHEN bob signs in before alice's revalidation starts
        try await auth.signIn(with: Credential(accessToken: "bob-token", refreshToken: "r", account: "bob"))
        start.fire()
        await provider.waitForBackgroundRevalidations()
        // THEN nothing was sent for bob (nor for alice, whose entry is gone)
        #expect(server.requests.count == 1)
        #expect(recorder.events.all.filter { $0.hasPrefix("background failed") } == ["background failed \(NetworkError.cancelled)"])
        // AND bob's own stale answer starts bob's revalidation, sent with his token
        _ = try await provider.response(me)
        clock.advance(by: 90)
        #expect(try await provider.response(me).report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        #expect(revalidations.all == ["Bearer bob-token"])
    }

    @Test("two accounts' entries of one URL (per-call interceptors, one provider) each get their own revalidation, at once")
    func twoAccountsOneURL() async throws {
        let (revalidations, release) = (Recorder<String>(), Signal())
        stubMe(revalidations: revalidations, release: release)
        let (alice, bob) = (auth("alice"), auth("bob"))
        let provider = provider()
        let me = CachedEndpoint(path: "/me", requiresAuthentication: true)
        _ = try await provider.response(me, interceptor: alice)
        _ = try await provider.response(me, interceptor: bob)
        clock.advance(by: 90)
        // WHEN both are answered stale while the server holds the first revalidation
        #expect(try await provider.response(me, interceptor: alice).report.cache == .staleWhileRevalidate)
        #expect(try await provider.response(me, interceptor: bob).report.cache == .staleWhileRevalidate)
        // THEN both revalidations reach the server, each with its account's token (the per-call interceptor)
        for _ in 0..<4 { _ = try await server.nextRequest(matching: .get, "/v1/me") }
        release.fire()
        await provider.waitForBackgroundRevalidations()
        #expect(Set(revalidations.all) == ["Bearer alice-token", "Bearer bob-token"])
        #expect(try await provider.response(me, interceptor: alice).report.cache == .hit)
        #expect(try await provider.response(me, interceptor: bob).report.cache == .hit)
    }

    @Test("the caller's per-call interceptor adapts the background revalidation too")
    func perCallInterceptorIsCarried() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let adapter = CountingAdapter()
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(), interceptor: adapter)
        clock.advance(by: 90)
        #expect(try await provider.response(CachedEndpoint(), interceptor: adapter).report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        #expect(adapter.runs.count == 2)   // the load and the background revalidation
        #expect(resource.notModifiedResponses == 1)
    }

    @Test("an entry made fresh again before the revalidation starts (a foreground .reload): nothing is sent")
    func freshAgainBeforeStart() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let start = Signal()
        let provider = provider()
        provider.backgroundRevalidations.holdStarts { await start.wait() }
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        #expect(try await provider.response(CachedEndpoint()).report.cache == .staleWhileRevalidate)
        // WHEN a .reload stores a fresh entry before the revalidation starts
        #expect(try await provider.response(CachedEndpoint(cachePolicy: .reload)).report.cache == .miss)
        start.fire()
        await provider.waitForBackgroundRevalidations()
        // THEN the revalidation sent nothing
        #expect(server.requests.count == 2)
        #expect(resource.notModifiedResponses == 0)
    }

    @Test("the caller's events (its cache answer, its end) are queued before any event of the background revalidation")
    func callerEventsFirst() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let recorder = OrderedEventRecorder()
        let provider = provider(monitors: [recorder])
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        _ = try await provider.response(CachedEndpoint())
        await provider.waitForBackgroundRevalidations()
        #expect(
            recorder.events.all == [
                "build", "cache miss", "finish",
                "build", "cache stale-while-revalidate", "finish",
                "background build", "background cache revalidated", "background finish",
            ])
    }

    @Test("NetworkLogger starts the background revalidation's line with \"(background)\"; the caller's line is unmarked")
    func loggerMarksBackground() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let lines = Recorder<String>()
        let provider = provider(monitors: [NetworkLogger(sink: LogSink { lines.append($0) })])
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        _ = try await provider.response(CachedEndpoint())
        await provider.waitForBackgroundRevalidations()
        let calls = lines.all.filter { $0.contains(" → ") }
        #expect(calls.count == 3)
        #expect(calls.filter { $0.contains("(background)") }.count == 1)
        #expect(calls.last?.hasPrefix("(background) GET https://api.example.com/v1/profile → 200 in ") == true)
        #expect(calls.last?.hasSuffix(" ms, 1 attempt, 14 bytes") == true)
    }

    @Test("waitForBackgroundRevalidations(): a cancelled waiter returns at once, the revalidation still running")
    func cancelledWaiterReturns() async throws {
        let (revalidations, release) = (Recorder<String>(), Signal())
        stubMe(revalidations: revalidations, release: release)
        let provider = provider()
        let me = CachedEndpoint(path: "/me")
        _ = try await provider.response(me)
        clock.advance(by: 90)
        #expect(try await provider.response(me).report.cache == .staleWhileRevalidate)
        _ = try await server.nextRequest(matching: .get, "/v1/me")
        _ = try await server.nextRequest(matching: .get, "/v1/me")   // the revalidation is held at the server
        // WHEN a waiter is cancelled
        let waiter = Task { await provider.waitForBackgroundRevalidations() }
        waiter.cancel()
        await waiter.value
        // THEN it returned while the revalidation is still held
        #expect(revalidations.count == 1)
        release.fire()
        await provider.waitForBackgroundRevalidations()
        #expect(try await provider.response(me).report.cache == .hit)
    }

    /// `/v1/me` with a deadline of its own.
    struct MeWithDeadline: Endpoint {
        var baseURL = URL(string: "https://api.example.com/v1/")!
        var path = "/me"
        var method: HTTPMethod = .get
        var deadline: TimeInterval?
    }

    @Test("a hung revalidation ends at the endpoint's deadline, as any call; the entry stays for the next stale answer")
    func hungRevalidationEndsAtDeadline() async throws {
        // Deadline runs on DispatchTime, not on the ManualClock: the stale call (which sends nothing) carries a
        // short deadline to its background revalidation.
        let (revalidations, release) = (Recorder<String>(), Signal())
        stubMe(revalidations: revalidations, release: release)
        defer { release.fire() }
        let recorder = OrderedEventRecorder()
        let provider = provider(monitors: [recorder])
        _ = try await provider.response(MeWithDeadline())
        clock.advance(by: 90)
        #expect(try await provider.response(MeWithDeadline(deadline: 0.5)).report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        #expect(recorder.events.all.last == "background failed \(NetworkError.deadlineExceeded(seconds: 0.5))")
        #expect(revalidations.count == 1)
        #expect(try await provider.response(MeWithDeadline()).report.cache == .staleWhileRevalidate)   // the entry stayed
        release.fire()
        await provider.waitForBackgroundRevalidations()
        #expect(revalidations.count == 2)
    }

    @Test("Vary: a request whose varying headers differ is not answered by the entry's stale-while-revalidate (RFC 9111 §4.1)")
    func varyMismatch() async throws {
        server.stub(.get, "/v1/greeting") { request in
            .json(
                Profile(name: request.headers["Accept-Language"] ?? "none"),
                headers: ["Cache-Control": "max-age=60, stale-while-revalidate=120", "Vary": "Accept-Language"])
        }
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/greeting", headers: ["Accept-Language": "ko"]))
        clock.advance(by: 90)
        let english = try await provider.response(CachedEndpoint(path: "/greeting", headers: ["Accept-Language": "en"]))
        #expect(english.report.cache == .miss)
        #expect(try JSONDecoder().decode(Profile.self, from: english.data).name == "en")
        await provider.waitForBackgroundRevalidations()
        #expect(server.requests.count == 2)
    }

    @Test(
        "only-if-cached inside the window: not answered stale-while-revalidate (that would send); notCached, nothing sent (RFC 9111 §5.2.1.7)")
    func onlyIfCachedInWindow() async throws {
        let resource = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60, stale-while-revalidate=120")
        server.stub(.get, "/v1/profile", resource: resource)
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        await #expect(throws: NetworkError.notCached) {
            try await provider.response(CachedEndpoint(headers: ["Cache-Control": "only-if-cached"]))
        }
        await provider.waitForBackgroundRevalidations()
        #expect(server.requests.count == 1)
    }
}
