import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Records the key of each cache answer the monitors are told of.
private struct AnswerKeyRecorder: EventMonitor {
    let keys = Recorder<CacheKey>()
    let results = Recorder<CacheResult>()

    func cacheDidAnswer(_ result: CacheResult, key: CacheKey, context: RequestContext) {
        keys.append(key)
        results.append(result)
    }
}

/// Where stale answers (RFC 5861 §3, §4) meet the app's own preconditions and ranges (RFC 9111 §4.3.2, RFC
/// 9110 §14.2), the endpoint's statuses, cancellation, the deadline and `HEAD` answers (RFC 9110 §9.3.2).
@Suite("Response cache: stale answers where features meet (RFC 5861)", SuiteTimeLimit.oneMinute)
struct StaleAnswerCrossFeatureTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()
    let control = "max-age=60, stale-while-revalidate=120"

    /// `/v1/profile`: `Kim`, `ETag: "v1"`, fresh for 60 s and usable stale for 120 s more while revalidated;
    /// a request with `If-None-Match: "v1"` is answered `304`, one without it the whole `200`.
    func stubProfile() {
        server.stub(.get, "/v1/profile") { [control] request in
            if request.headers["If-None-Match"] == "\"v1\"" { return .status(304, headers: ["ETag": "\"v1\"", "Cache-Control": control]) }
            return .json(Profile(name: "Kim"), headers: ["ETag": "\"v1\"", "Cache-Control": control])
        }
    }

    @Test(
        "RFC 5861 §3 with RFC 9110 §14.2 / §13.2.2: a stale answer to an app's Range or conditional request revalidates the entry itself",
        arguments: [["Range": "bytes=0-3"], ["If-None-Match": "\"v1\""]])
    func backgroundRevalidationOfPreconditionedRequest(_ headers: [String: String]) async throws {
        // GIVEN an entry 30 s stale within its stale-while-revalidate window
        stubProfile()
        let provider = server.makeProvider(cache: store, now: clock.now)
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        // WHEN the app asks with its own Range or If-None-Match
        let stale = try await provider.response(CachedEndpoint(headers: headers, acceptableStatusCodes: [200, 206, 304]))
        #expect(stale.report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        // THEN the background revalidation asked about the entry, without the app's preconditions
        let background = try #require(server.requests.last)
        #expect(server.requests.count == 2)
        #expect(background.headers["If-None-Match"] == "\"v1\"")
        #expect(background.headers["Range"] == nil)
        // AND the entry is fresh again: the next call is a hit, starting nothing
        #expect(try await provider.response(CachedEndpoint()).report.cache == .hit)
        #expect(server.requests.count == 2)
    }

    @Test("RFC 5861 §3: a stale answer the endpoint rejects (a stored 404 another endpoint accepted) still starts the revalidation")
    func rejectedStaleAnswerStillRevalidates() async throws {
        // GIVEN a 404 stored for an endpoint that accepts it, usable stale while revalidated
        server.stub(.get, "/v1/profile") { [control] request in
            if request.headers["If-None-Match"] == "\"gone\"" {
                return .json(Profile(name: "Kim"), headers: ["ETag": "\"v1\"", "Cache-Control": control])
            }
            return .status(404, headers: ["ETag": "\"gone\"", "Cache-Control": control])
        }
        let provider = server.makeProvider(cache: store, now: clock.now)
        _ = try await provider.response(CachedEndpoint(acceptableStatusCodes: [200, 404]))
        clock.advance(by: 90)
        // WHEN an endpoint that rejects 404 is answered by it stale
        await #expect(throws: NetworkError.invalidStatusCode(404)) { try await provider.response(CachedEndpoint()) }
        await provider.waitForBackgroundRevalidations()
        // THEN the entry was revalidated behind the failure: the server's new 200 answers the next call
        #expect(server.requests.count == 2)
        #expect(server.requests.last?.headers["If-None-Match"] == "\"gone\"")
        let fresh = try await provider.response(CachedEndpoint())
        #expect(fresh.report.cache == .hit)
        #expect(try JSONDecoder().decode(Profile.self, from: fresh.data) == Profile(name: "Kim"))
    }

    /// Stores `/v1/profile` (`stale-if-error=600`), moves 300 s past its freshness and makes the server answer `failure`.
    func storeThenFail(_ failure: MockResponse) async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60, stale-if-error=600", "ETag": "\"v1\""]))
        _ = try await server.makeProvider(cache: store, now: clock.now).response(CachedEndpoint())
        clock.advance(by: 360)
        server.stub(.get, "/v1/profile", failure)
    }

    @Test("RFC 5861 §4: a call cancelled while it waits to retry a 503 throws .cancelled, not a stale-if-error answer")
    func cancelAfterServerErrorIsNoStaleAnswer() async throws {
        try await storeThenFail(.status(503))
        let provider = server.makeProvider(
            interceptor: FixedRetrier(result: .retryWithDelay(1)), cache: store, now: clock.now, sleep: { _ in throw CancellationError() })
        await #expect(throws: NetworkError.cancelled) { try await provider.response(CachedEndpoint()) }
    }

    @Test("RFC 5861 §4: the deadline reached while retrying a 429 is a server that could not answer: the stale entry answers")
    func deadlineAfterTooManyRequestsIsStaleAnswer() async throws {
        try await storeThenFail(.status(429))
        let provider = server.makeProvider(
            interceptor: FixedRetrier(result: .retryWithDelay(100)), deadline: 10, cache: store, cachePolicy: .staleIfError(upTo: 600), now: clock.now)
        let response = try await provider.response(CachedEndpoint())
        #expect(response.report.cache == .staleIfError)
        #expect(response.report.statusCodes == [429])
    }

    @Test("RFC 9111 §4.3.4: a call cancelled while it waits to retry after a 304 keeps the entry and throws .cancelled")
    func cancelAfterNotModifiedKeepsEntry() async throws {
        // GIVEN a stale entry whose revalidation the endpoint rejects (a 304 the retrier is asked about)
        server.stub(.get, "/v1/profile") { request in
            if request.headers["If-None-Match"] != nil { return .status(304, headers: ["ETag": "\"other\""]) }
            return .json(Profile(name: "Kim"), headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=60"])
        }
        _ = try await server.makeProvider(cache: store, now: clock.now).response(CachedEndpoint())
        clock.advance(by: 90)
        let provider = server.makeProvider(
            interceptor: FixedRetrier(result: .retryWithDelay(1)), cache: store, now: clock.now, sleep: { _ in throw CancellationError() })
        // WHEN the call is cancelled in the retry delay
        await #expect(throws: NetworkError.cancelled) { try await provider.response(CachedEndpoint()) }
        // THEN nothing else was sent, and the entry is still there
        #expect(server.requests.count == 2)
        let stored = try await server.makeProvider(cache: store, cachePolicy: .cacheOnly, now: clock.now).response(CachedEndpoint())
        #expect(stored.report.cache == .staleHit)
    }

    @Test("RFC 9110 §9.3.2: a HEAD answered by the stored GET reports the GET's key, fresh or as the stale-if-error fallback")
    func headAnswerKeys() async throws {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]))
        server.stub(.head, "/v1/profile", .status(503))
        let monitor = AnswerKeyRecorder()
        let provider = server.makeProvider(cache: store, cachePolicy: .staleIfError(upTo: 600), now: clock.now, monitors: [monitor])
        _ = try await provider.response(CachedEndpoint())
        _ = try await provider.response(CachedEndpoint(method: .head))   // fresh: storedGETAnswer
        clock.advance(by: 90)
        let fallback = try await provider.response(CachedEndpoint(method: .head))   // the 503: the fallback
        #expect(fallback.report.cache == .staleIfError)
        await provider.waitForBackgroundRevalidations()
        let answers = zip(monitor.results.all, monitor.keys.all).filter { $0.0 != .miss }
        #expect(answers.map(\.0) == [.hit, .staleIfError])
        #expect(answers.map(\.1.method) == ["GET", "GET"])
    }
}
