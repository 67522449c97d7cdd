import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// NetworkLogger marks every line of a background revalidation (RFC 5861 §3) `(background)`: its failed
/// attempts, its redirects, its cache answer and its end, so that a log reader tells it from the caller's call.
@Suite("NetworkLogger: the lines of a background revalidation (RFC 5861 §3)", SuiteTimeLimit.oneMinute)
struct BackgroundLogLinesTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    @Test("a background revalidation's failed attempt, redirect, cache answer and end are all marked; the caller's lines are not")
    func everyBackgroundLineIsMarked() async throws {
        // GIVEN an entry stale within its window, whose revalidation fails once with a 503, is then redirected, then answered 304
        let control = "max-age=60, stale-while-revalidate=120"
        let conditional = Recorder<String>()
        server.stub(.get, "/v1/profile") { request in
            guard request.headers["If-None-Match"] != nil else {
                return .json(Profile(name: "Kim"), headers: ["ETag": "\"v1\"", "Cache-Control": control])
            }
            conditional.append("try")
            if conditional.count == 1 { return .status(503) }
            return .status(307, headers: ["Location": "https://api.example.com/v1/profile-moved"])
        }
        server.stub(.get, "/v1/profile-moved", .status(304, headers: ["ETag": "\"v1\"", "Cache-Control": control]))
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            interceptor: FixedRetrier(result: .retry), cache: store, now: clock.now, monitors: [NetworkLogger(sink: LogSink { lines.append($0) })])
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 90)
        // WHEN it answers a call stale, and the background revalidation runs
        #expect(try await provider.response(CachedEndpoint()).report.cache == .staleWhileRevalidate)
        await provider.waitForBackgroundRevalidations()
        // THEN each line of the revalidation is marked, and only those
        let all = lines.all
        let background = all.filter { $0.hasPrefix("(background) ") }
        #expect(background.contains { $0.hasPrefix("(background) attempt 1: GET https://api.example.com/v1/profile → 503") })
        #expect(background.contains { $0.hasPrefix("(background) ↪ 307 https://api.example.com/v1/profile → GET") })
        #expect(background.contains { $0.hasPrefix("(background) GET https://api.example.com/v1/profile cache: ") })
        #expect(background.contains { $0.hasPrefix("(background) GET https://api.example.com/v1/profile-moved → ") })
        #expect(all.filter { $0.contains("cache: staleWhileRevalidate") || $0.contains("cache: stale-while-revalidate") }.allSatisfy { !$0.hasPrefix("(") })
        #expect(background.count == 4)
    }
}
