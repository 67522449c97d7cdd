import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Counts how often the retriers are asked.
struct CountingRetrier: RequestInterceptor {
    let asked = Recorder<Int>()
    func retry(_ request: URLRequest, dueTo error: any Error, response: Response?, context: RequestContext) async -> RetryResult {
        asked.append(response?.statusCode ?? 0)
        return .doNotRetry
    }
}

/// The edges of the cache's own `304`, `206` and whole answers to the app's preconditions and ranges
/// (RFC 9111 §4.3.2, RFC 9110 §13.2.2, §14.2).
@Suite("Response cache: the app's preconditions and ranges, edge cases (RFC 9111 §4.3.2)", SuiteTimeLimit.oneMinute)
struct CacheAnswerEdgeTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()
    let digits = Data("0123456789".utf8)

    func provider(
        policy: CachePolicy = .http, interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor] = []
    ) -> NetworkProvider {
        server.makeProvider(interceptor: interceptor, cache: store, cachePolicy: policy, now: clock.now, monitors: monitors)
    }

    /// Stores `/v1/file` ("0123456789", `ETag: "v1"`, `headers`), with `cacheControl`.
    @discardableResult
    func storeFile(cacheControl: String = "max-age=600", headers: [String: String] = [:]) async throws -> MockResource {
        let resource = MockResource(
            body: digits, etag: "\"v1\"", cacheControl: cacheControl, headers: headers.merging(["Content-Type": "text/plain"]) { a, _ in a })
        server.stub(.get, "/v1/file", resource: resource)
        _ = try await provider().response(CachedEndpoint(path: "/file"))
        return resource
    }

    func file(_ headers: [String: String], policy: CachePolicy? = nil, accepting codes: Set<Int> = Set(200..<300).union([304])) -> CachedEndpoint {
        CachedEndpoint(path: "/file", headers: headers, cachePolicy: policy, acceptableStatusCodes: codes)
    }

    @Test("RFC 9110 §13.1.5, §15.3.1: the whole stored 200 for a non-matching If-Range meets the endpoint's statuses (one that accepts only 206 fails)")
    func wholeAnswerIsValidated() async throws {
        try await storeFile()
        await #expect(throws: NetworkError.invalidStatusCode(200)) {
            try await provider().response(file(["Range": "bytes=0-1", "If-Range": "\"v0\""], accepting: [206]))
        }
        #expect(server.requests.count == 1)
    }

    @Test("RFC 9110 §14.4, §8.4, RFC 9530: the cache's 206 drops the digests of the whole content; Repr-Digest, ETag and Last-Modified stay")
    func partialHeaders() async throws {
        try await storeFile(headers: [
            "Content-MD5": "eB5eJF1ptWaXm4bijSPyxw==", "Content-Digest": "sha-256=:abc=:", "Repr-Digest": "sha-256=:def=:",
            "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT",
        ])
        let partial = try await provider().response(file(["Range": "bytes=2-3"]))
        #expect(partial.statusCode == 206)
        #expect(partial.value(forHTTPHeaderField: "Content-MD5") == nil)
        #expect(partial.value(forHTTPHeaderField: "Content-Digest") == nil)
        #expect(partial.value(forHTTPHeaderField: "Repr-Digest") == "sha-256=:def=:")
        #expect(partial.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        #expect(partial.value(forHTTPHeaderField: "Last-Modified") == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(partial.value(forHTTPHeaderField: "Content-Length") == "2")
        #expect(partial.value(forHTTPHeaderField: "Content-Range") == "bytes 2-3/10")
    }

    @Test("RFC 9111 §4.3.2: without Last-Modified and Date, If-Modified-Since is compared with the time the response was received")
    func ifModifiedSinceByReceivedTime() async throws {
        // the server says the response is already 100 s old, but it has no Date: the cache uses when it arrived
        server.stub(.get, "/v1/undated", .json(Profile(name: "Kim"), headers: ["Cache-Control": "max-age=600", "Age": "100"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/undated"))
        let received = clock.now()
        let before = try await provider.response(
            CachedEndpoint(path: "/undated", headers: ["If-Modified-Since": MockResource.httpDate(received - 50)], acceptableStatusCodes: [200, 304]))
        let at = try await provider.response(
            CachedEndpoint(path: "/undated", headers: ["If-Modified-Since": MockResource.httpDate(received)], acceptableStatusCodes: [200, 304]))
        #expect(before.statusCode == 200)
        #expect(at.statusCode == 304)
        #expect(server.requests.count == 1)
    }

    @Test("RFC 9110 §13.2.2: If-None-Match is evaluated before Range: a matching tag is a 304, not a 206")
    func notModifiedBeforeRange() async throws {
        try await storeFile()
        let response = try await provider().response(file(["Range": "bytes=0-1", "If-None-Match": "\"v1\""]))
        #expect(response.statusCode == 304 && response.data.isEmpty)
        #expect(server.requests.count == 1)
    }

    @Test(
        "RFC 9110 §8.4, §8.6: a stored body decoded from a Content-Encoding, or not of its Content-Length, is no base for a range: the server answers",
        arguments: [["Content-Encoding": "gzip"], ["Content-Length": "99"]])
    func storedBodyNotAsSent(_ headers: [String: String]) async throws {
        let resource = try await storeFile(headers: headers)
        let response = try await provider().response(file(["Range": "bytes=0-1"]))
        #expect(response.report.cache == nil)
        #expect(server.requests.count == 2)
        #expect(resource.partialResponses == 1)
    }

    @Test("RFC 9111 §4.3.2: a stored status other than 200 does not answer the app's If-None-Match: the server does")
    func storedNon200GoesToTheServer() async throws {
        server.stub(.get, "/v1/gone", .status(404, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\""]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/gone", acceptableStatusCodes: [404]))
        let asked = try await provider.response(CachedEndpoint(path: "/gone", headers: ["If-None-Match": "\"v1\""], acceptableStatusCodes: [404]))
        #expect(asked.report.cache == nil)
        #expect(server.requests.count == 2)
        #expect(server.requests.last?.headers["If-None-Match"] == "\"v1\"")
    }

    @Test("RFC 9111 §4.2.4: under .cacheElseLoad a stale entry answers the app's If-None-Match and Range as a stale hit")
    func cacheElseLoadStale() async throws {
        try await storeFile(cacheControl: "max-age=60")
        clock.advance(by: 61)
        let notModified = try await provider().response(file(["If-None-Match": "\"v1\""], policy: .cacheElseLoad))
        let partial = try await provider().response(file(["Range": "bytes=8-"], policy: .cacheElseLoad))
        #expect(notModified.statusCode == 304 && notModified.report.cache == .staleHit)
        #expect(partial.statusCode == 206 && partial.report.cache == .staleHit)
        #expect(String(decoding: partial.data, as: UTF8.self) == "89")
        #expect(server.requests.count == 1)
    }

    @Test("RFC 9111 §4.2.4, §5.2.2.2: a stale must-revalidate entry does not answer the app's condition under .cacheElseLoad: it goes as built")
    func mustRevalidateUnderCacheElseLoad() async throws {
        let resource = try await storeFile(cacheControl: "max-age=60, must-revalidate")
        clock.advance(by: 61)
        let response = try await provider().response(file(["If-None-Match": "\"v1\""], policy: .cacheElseLoad))
        #expect(response.statusCode == 304 && response.report.cache == nil)   // the server's own
        #expect(resource.notModifiedResponses == 1)
        #expect(server.requests.last?.headers["If-None-Match"] == "\"v1\"")
        #expect(server.requests.last?.headers["If-Modified-Since"] == nil)
    }

    @Test("RFC 9110 §15.4.5: the cache's 304 carries the stored Cache-Control and Date")
    func notModifiedFields() async throws {
        let date = MockResource.httpDate(clock.now())
        try await storeFile(headers: ["Date": date])
        let response = try await provider().response(file(["If-None-Match": "\"v1\""]))
        #expect(response.statusCode == 304)
        #expect(response.value(forHTTPHeaderField: "Cache-Control") == "max-age=600")
        #expect(response.value(forHTTPHeaderField: "Date") == date)
    }

    @Test("the monitors see a cache 304 and a cache 206 as one finished call each, nothing sent")
    func monitorEvents() async throws {
        try await storeFile()
        let monitor = RecordingMonitor()
        let recorder = CacheRecorder()
        let provider = provider(monitors: [monitor, recorder])
        _ = try await provider.response(file(["If-None-Match": "\"v1\""]))
        _ = try await provider.response(file(["Range": "bytes=0-1"]))
        await provider.waitForMonitors()
        #expect(monitor.log.all == ["built", "finished 304 after 0", "built", "finished 206 after 0"])
        #expect(recorder.results.all == [.hit, .hit])
    }

    @Test("a cache 304 the endpoint does not accept is final: one finished call, no retrier asked (as for any cache answer)")
    func failedValidationIsFinal() async throws {
        try await storeFile()
        let monitor = RecordingMonitor()
        let retrier = CountingRetrier()
        let provider = provider(interceptor: retrier, monitors: [monitor])
        await #expect(throws: NetworkError.invalidStatusCode(304)) {
            try await provider.response(file(["If-None-Match": "\"v1\""], accepting: Set(200..<300)))
        }
        await provider.waitForMonitors()
        #expect(monitor.log.all.filter { $0.hasPrefix("finished") }.count == 1)
        #expect(monitor.log.all.contains("invalid 304"))
        #expect(retrier.asked.all.isEmpty)
        #expect(server.requests.count == 1)
    }

    @Test("RFC 5861 §4: a stale-if-error fallback the endpoint does not accept (a stored 404) is not used: the call's own error is thrown")
    func staleIfErrorFallbackIsValidated() async throws {
        server.stub(.get, "/v1/gone", .status(404, headers: ["Cache-Control": "max-age=60"]), .status(503))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/gone", acceptableStatusCodes: [404]))
        clock.advance(by: 90)
        await #expect(throws: NetworkError.invalidStatusCode(503)) {
            try await provider.response(CachedEndpoint(path: "/gone", cachePolicy: .staleIfError(upTo: 600)))
        }
        #expect(server.requests.count == 2)
    }

    @Test("cachedThenFresh under .cacheOnly agrees with response(_:): a non-matching If-None-Match gets the stored 200")
    func cachedThenFreshAgrees() async throws {
        server.stub(.get, "/v1/profile", resource: MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=600"))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint())
        let asked = CachedEndpoint(headers: ["If-None-Match": "\"v0\""], cachePolicy: .cacheOnly)
        #expect(try await provider.response(asked).statusCode == 200)
        var values: [CachedOrFresh<Profile>] = []
        for try await value in provider.cachedThenFresh(asked, as: Profile.self) { values.append(value) }
        #expect(values.map(\.value) == [Profile(name: "Kim")])
        #expect(values.map(\.isFromCache) == [true])
        #expect(server.requests.count == 1)
    }

    @Test("cachedThenFresh under .cacheOnly checks the stored status as response(_:) does: the same error for a stored 404")
    func cachedThenFreshChecksTheStatus() async throws {
        server.stub(.get, "/v1/gone", .status(404, headers: ["Cache-Control": "max-age=600"]))
        let provider = provider()
        _ = try await provider.response(CachedEndpoint(path: "/gone", acceptableStatusCodes: [404]))
        let asked = CachedEndpoint(path: "/gone", cachePolicy: .cacheOnly)
        await #expect(throws: NetworkError.invalidStatusCode(404)) { try await provider.response(asked) }
        await #expect(throws: NetworkError.invalidStatusCode(404)) {
            for try await _ in provider.cachedThenFresh(asked, as: Profile.self) {}
        }
        #expect(server.requests.count == 1)
    }
}
