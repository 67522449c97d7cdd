import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `stale-if-error` (RFC 5861 §4): the server's (or the request's) own grant to use a stale entry when the
/// server cannot answer, under the default `.http` policy too.
@Suite("Response cache: the stale-if-error directive (RFC 5861 §4)", SuiteTimeLimit.oneMinute)
struct StaleIfErrorDirectiveTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    func provider(policy: CachePolicy = .http) -> NetworkProvider {
        server.makeProvider(cache: store, cachePolicy: policy, now: clock.now)
    }

    /// Stores `/v1/profile` with `control`, moves the clock by `stale` seconds past its 60 s of freshness, and
    /// makes the server fail with `failure`.
    func storeThenFail(control: String, stale: TimeInterval, failure: MockResponse, policy: CachePolicy = .http) async throws -> NetworkProvider {
        server.stub(.get, "/v1/profile", .json(Profile(name: "Kim"), headers: ["Cache-Control": control, "ETag": "\"v1\""]))
        let provider = provider(policy: policy)
        _ = try await provider.response(CachedEndpoint())
        clock.advance(by: 60 + stale)
        server.stub(.get, "/v1/profile", failure)
        return provider
    }

    @Test(
        "under .http, a 500, 502, 503, 504 or a transport failure is answered by an entry stale within the response's stale-if-error (RFC 5861 §4)",
        arguments: [
            MockResponse.status(500), .status(502), .status(503), .status(504), .failure(URLError(.notConnectedToInternet)),
            .failure(URLError(.timedOut)),
        ])
    func answersServerErrors(_ failure: MockResponse) async throws {
        let provider = try await storeThenFail(control: "max-age=60, stale-if-error=600", stale: 300, failure: failure)
        let response = try await provider.response(CachedEndpoint())
        #expect(response.report.cache == .staleIfError)
        #expect(response.report.cache?.isStale == true)
        #expect(response.value(forHTTPHeaderField: "Age") == "360")
        #expect(try JSONDecoder().decode(Profile.self, from: response.data) == Profile(name: "Kim"))
    }

    @Test("beyond N seconds stale, the error goes through: \"the cached response SHOULD NOT be used\" (RFC 5861 §4)")
    func beyondAllowance() async throws {
        let provider = try await storeThenFail(control: "max-age=60, stale-if-error=600", stale: 601, failure: .status(503))
        await #expect(throws: NetworkError.invalidStatusCode(503)) { try await provider.response(CachedEndpoint()) }
    }

    @Test("at exactly N seconds stale the entry still answers")
    func edgeOfAllowance() async throws {
        let provider = try await storeThenFail(control: "max-age=60, stale-if-error=600", stale: 600, failure: .status(503))
        #expect(try await provider.response(CachedEndpoint()).report.cache == .staleIfError)
    }

    @Test(
        "a status that is no server failure in RFC 5861 §4's sense (404, 501, 505) goes through",
        arguments: [404, 501, 505])
    func otherStatuses(_ status: Int) async throws {
        let provider = try await storeThenFail(control: "max-age=60, stale-if-error=600", stale: 300, failure: .status(status))
        await #expect(throws: NetworkError.invalidStatusCode(status)) { try await provider.response(CachedEndpoint()) }
    }

    @Test(
        "must-revalidate or no-cache on the entry overrides stale-if-error: the error goes through (RFC 9111 §4.2.4, §5.2.2.2, §5.2.2.4)",
        arguments: ["must-revalidate", "no-cache"])
    func forbiddenByResponse(_ directive: String) async throws {
        let provider = try await storeThenFail(control: "max-age=60, stale-if-error=600, \(directive)", stale: 300, failure: .status(503))
        await #expect(throws: NetworkError.invalidStatusCode(503)) { try await provider.response(CachedEndpoint()) }
    }

    @Test("without the directive, .http lets the error through, as before")
    func withoutDirective() async throws {
        let provider = try await storeThenFail(control: "max-age=60", stale: 300, failure: .status(503))
        await #expect(throws: NetworkError.invalidStatusCode(503)) { try await provider.response(CachedEndpoint()) }
    }

    @Test("a request's stale-if-error grants the same for that request (RFC 5861 §4: \"its scope of application is the request it appears in\")")
    func requestDirective() async throws {
        let provider = try await storeThenFail(control: "max-age=60", stale: 300, failure: .status(503))
        let granted = try await provider.response(CachedEndpoint(headers: ["Cache-Control": "stale-if-error=400"]))
        #expect(granted.report.cache == .staleIfError)
        await #expect(throws: NetworkError.invalidStatusCode(503)) {
            try await provider.response(CachedEndpoint(headers: ["Cache-Control": "stale-if-error=100"]))
        }
    }

    @Test(
        "a request's stale-if-error is the limit, narrower or wider than the response's (RFC 5861 §4: the request's value is what it accepts)",
        arguments: [(100.0, 300.0, false), (900, 800, true), (900, 950, false)])
    func requestDirectiveLimitsResponse(_ requested: TimeInterval, _ stale: TimeInterval, _ answered: Bool) async throws {
        let provider = try await storeThenFail(control: "max-age=60, stale-if-error=600", stale: stale, failure: .status(503))
        let call = CachedEndpoint(headers: ["Cache-Control": "stale-if-error=\(Int(requested))"])
        if answered {
            #expect(try await provider.response(call).report.cache == .staleIfError)
        } else {
            await #expect(throws: NetworkError.invalidStatusCode(503)) { try await provider.response(call) }
        }
    }

    @Test(
        "a request's no-cache or max-age=0 (pull-to-refresh) opts out of the response's stale-if-error: the error goes through (RFC 9111 §5.2.1.4, §5.2.1.1)",
        arguments: ["no-cache", "max-age=0"])
    func requestOptsOut(_ control: String) async throws {
        let provider = try await storeThenFail(control: "max-age=60, stale-if-error=600", stale: 300, failure: .status(503))
        await #expect(throws: NetworkError.invalidStatusCode(503)) {
            try await provider.response(CachedEndpoint(headers: ["Cache-Control": control]))
        }
    }

    @Test("the app's .staleIfError(upTo:) is its own choice: a request's no-cache or smaller stale-if-error does not narrow it")
    func appPolicyStands() async throws {
        let provider = try await storeThenFail(
            control: "max-age=60, stale-if-error=600", stale: 300, failure: .status(503), policy: .staleIfError(upTo: 1_000))
        #expect(try await provider.response(CachedEndpoint(headers: ["Cache-Control": "no-cache"])).report.cache == .staleIfError)
        #expect(try await provider.response(CachedEndpoint(headers: ["Cache-Control": "stale-if-error=10"])).report.cache == .staleIfError)
    }

    @Test(
        "beside .staleIfError(upTo:), the larger allowance wins: the app's 100 s or 1000 s, the response's 600 s",
        arguments: [(100.0, 300.0), (1_000, 800)])
    func combinesWithPolicy(_ appSeconds: TimeInterval, _ stale: TimeInterval) async throws {
        let provider = try await storeThenFail(
            control: "max-age=60, stale-if-error=600", stale: stale, failure: .status(503), policy: .staleIfError(upTo: appSeconds))
        #expect(try await provider.response(CachedEndpoint()).report.cache == .staleIfError)
    }

    @Test("only-if-cached with no fresh entry counts as the error (RFC 9111 §5.2.1.7's 504): stale-if-error answers")
    func onlyIfCached() async throws {
        let provider = try await storeThenFail(control: "max-age=60, stale-if-error=600", stale: 300, failure: .status(503))
        let response = try await provider.response(CachedEndpoint(headers: ["Cache-Control": "only-if-cached"]))
        #expect(response.report.cache == .staleIfError)
        #expect(server.requests.count == 1)
    }
}

/// Parsing of RFC 5861's two directives: delta-seconds (RFC 9111 §1.2.2) as `max-age` is parsed.
@Suite("Cache-Control: stale-while-revalidate and stale-if-error parsing (RFC 5861 §3, §4)")
struct StaleDirectiveParsingTests {
    @Test(
        "values: token and quoted forms, any case; malformed ones are ignored; a repeated one grants its smallest value",
        arguments: [
            ("stale-while-revalidate=60, stale-if-error=600", 60.0, 600.0),
            ("STALE-WHILE-REVALIDATE=60 ,Stale-If-Error = \"600\"", 60, 600),
            ("max-age=5, stale-while-revalidate=\"30\"", 30, nil),
            ("stale-while-revalidate=-1, stale-if-error=1.5", nil, nil),
            ("stale-while-revalidate, stale-if-error=", nil, nil),
            ("stale-while-revalidate=abc, stale-if-error=\"\"", nil, nil),
            ("stale-while-revalidate=60, stale-while-revalidate=30", 30, nil),
            ("stale-if-error=10, stale-if-error=x, stale-if-error=20", nil, 10),
            ("stale-while-revalidate=0", 0, nil),
        ] as [(String, Double?, Double?)])
    func parsing(_ header: String, _ whileRevalidating: Double?, _ ifError: Double?) {
        let control = CacheControl(header: header)
        #expect(control.staleWhileRevalidate == whileRevalidating)
        #expect(control.staleIfError == ifError)
    }

    @Test("a value too large to hold counts as at least 2^31 seconds, never an overflow (RFC 9111 §1.2.2)")
    func hugeValue() {
        let control = CacheControl(header: "stale-while-revalidate=99999999999999999999999, stale-if-error=4294967296")
        #expect((control.staleWhileRevalidate ?? 0) >= 2_147_483_648)
        #expect((control.staleIfError ?? 0) >= 2_147_483_648)
    }
}
