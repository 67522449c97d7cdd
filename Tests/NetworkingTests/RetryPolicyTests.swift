import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("RetryPolicy")
struct RetryPolicyTests {
    let request = URLRequest(url: URL(string: "https://api.example.com/v1/users/1")!)

    func response(_ status: Int, headers: [String: String] = [:], for request: URLRequest? = nil) -> Response {
        let request = request ?? self.request
        return Response(
            data: Data(), httpResponse: HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: nil, headerFields: headers)!, request: request)
    }

    func decide(
        _ policy: RetryPolicy, status: Int? = nil, error: any Error = NetworkError.invalidStatusCode(503),
        method: HTTPMethod = .get, headers: [String: String] = [:], context: RequestContext? = nil
    ) async -> RetryResult {
        var request = self.request
        request.httpMethod = method.rawValue
        return await policy.retry(
            request, dueTo: error, response: status.map { response($0, headers: headers, for: request) },
            context: context ?? RequestContext(endpoint: TestEndpoint()))
    }

    func delay(of result: RetryResult) -> TimeInterval? {
        if case .retryWithDelay(let seconds) = result { return seconds }
        return nil
    }

    @Test func backoffSequenceIsExponentialAndCapped() {
        let policy = RetryPolicy(exponentialBackoffBase: 2, exponentialBackoffScale: 0.5, maximumDelay: 3, random: { 0 })
        #expect((0..<6).map(policy.backoffDelay(forRetry:)) == [0.5, 1, 2, 3, 3, 3])
        let huge = RetryPolicy(maximumDelay: 30, random: { 0 })
        #expect(huge.backoffDelay(forRetry: 5_000) == 30)
    }

    @Test func jitterStaysWithinItsBounds() {
        let extremes = [0.0, 1.0].map { draw in RetryPolicy(exponentialBackoffScale: 1, jitter: 0.5, random: { draw }).backoffDelay(forRetry: 2) }
        #expect(extremes == [4, 2])
        let policy = RetryPolicy(exponentialBackoffScale: 1, jitter: 0.5)
        let samples = (0..<1_000).map { _ in policy.backoffDelay(forRetry: 2) }
        #expect(samples.allSatisfy { (2...4).contains($0) })
        #expect(Set(samples).count > 100)   // really random, so clients do not retry in lockstep
    }

    @Test func retryAfterSecondsAndDatesAreRead() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)   // Wed, 21 Oct 2015 07:28:00 GMT
        let policy = RetryPolicy(maximumDelay: 300, now: { now })
        #expect(policy.retryAfterDelay("120") == 120)
        #expect(policy.retryAfterDelay(" 7 ") == 7)
        #expect(policy.retryAfterDelay("Wed, 21 Oct 2015 07:29:30 GMT") == 90)
        #expect(policy.retryAfterDelay("Wednesday, 21-Oct-15 07:29:30 GMT") == 90)
        #expect(policy.retryAfterDelay("Wed Oct 21 07:29:30 2015") == 90)
        #expect(policy.retryAfterDelay("Wed, 21 Oct 2015 07:00:00 GMT") == 0)   // in the past
        #expect(policy.retryAfterDelay("3600") == 3600)   // longer than the policy waits
        #expect(policy.retryAfterDelay("99999999999999999999999999") == 1e9)   // huge
        #expect(policy.retryAfterDelay("\t120\t") == 120)
        #expect(policy.retryAfterDelay("0000000000003600") == 3600)   // leading zeros are digits too
        #expect(policy.retryAfterDelay("Sun, 29 Feb 2032 00:00:00 GMT") != nil)   // a leap day
        #expect(policy.retryAfterDelay("Sunday, 06-Nov-94 08:49:37 GMT") == 0)
        #expect(policy.retryAfterDelay("Sun Nov  6 08:49:37 1994") == 0)
        for malformed in [
            "soon", "-5", "1.5", "", "12abc", "Wed, 99 Foo 2015", "Mon, 30 Feb 2015 07:29:30 GMT",
            "Wed, 21 Oct 2015 24:00:00 GMT", "Wed, 21 Oct 2015 07:29:30 UTC", "Wed, 21 Oct 15 07:29:30 GMT",
            "Wed,  21 Oct 2015 07:29:30 GMT x", "１２０", "12\u{301}", String(repeating: "9 ", count: 10_000),
        ] {
            #expect(policy.retryAfterDelay(malformed) == nil, "\(malformed)")
        }
    }

    @Test func aRetryAfterSentTwiceAndCombinedWithACommaIsStillHonoured() async {
        // GIVEN a policy, and servers (or proxies) that sent Retry-After twice, which the HTTP stack joins with a comma
        let now = Date(timeIntervalSince1970: 784_111_657)   // Sun, 06 Nov 1994 08:47:37 GMT
        let policy = RetryPolicy(maximumDelay: 300, random: { 0 }, now: { now })
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"   // 120 s after now
        // WHEN each 503 is decided
        // THEN equal values read as one, two equal dates as that date, and differing values as the longest
        #expect(delay(of: await decide(policy, status: 503, headers: ["Retry-After": "120, 120"])) == 120)
        #expect(delay(of: await decide(policy, status: 503, headers: ["Retry-After": "120,120"])) == 120)
        #expect(delay(of: await decide(policy, status: 503, headers: ["Retry-After": "\(date), \(date)"])) == 120)
        #expect(delay(of: await decide(policy, status: 503, headers: ["Retry-After": "30, 120"])) == 120)
        #expect(delay(of: await decide(policy, status: 503, headers: ["Retry-After": "60, \(date)"])) == 120)
        // and a combined value with a malformed part is ignored: the backoff is used
        let backoff = policy.backoffDelay(forRetry: 0)
        for malformed in ["120, soon", "120,", ", 120", "120, 1.5", "Sun, 06 Nov 1994 08:49:37 GMT, Sun"] {
            #expect(delay(of: await decide(policy, status: 503, headers: ["Retry-After": malformed])) == backoff, "\(malformed)")
        }
    }

    @Test func rfc850TwoDigitYearsFollowTheFiftyYearRule() {
        // GIVEN a clock in 2026
        let policy = RetryPolicy(now: { Date(timeIntervalSince1970: 1_767_225_600) })   // 2026-01-01
        // THEN 75 is 2075 (not more than 50 years ahead), 94 is 1994, and 77 is 1977 (2077 would be 51 years ahead)
        #expect(policy.retryAfterDelay("Monday, 01-Jan-75 00:00:00 GMT") == 1e9)   // 49 years away: capped
        #expect(policy.retryAfterDelay("Sunday, 06-Nov-94 08:49:37 GMT") == 0)
        #expect(policy.retryAfterDelay("Saturday, 01-Jan-77 00:00:00 GMT") == 0)
        #expect(policy.retryAfterDelay("Friday, 02-Jan-26 00:00:00 GMT") == 86_400)
    }

    @Test func hostileRetryAfterValuesNeitherTrapNorParse() {
        // GIVEN a valid HTTP date followed by bytes that crash or leak in Foundation's DateFormatter on Linux
        let policy = RetryPolicy()
        let date = "Wed, 21 Oct 2015 07:29:30 GMT"
        // WHEN each is parsed, THEN nothing traps and each is malformed
        for suffix in ["\u{301}", "\u{1F600}", "\u{0}", "\r\n", " \u{FFFF}", "\u{10FFFF}"] {
            #expect(policy.retryAfterDelay(date + suffix) == nil)
            #expect(policy.retryAfterDelay(suffix + date) == nil)
        }
    }

    @Test func aRetryAfterLongerThanTheMaximumEndsTheCallWithTheServersDelay() async {
        // GIVEN a policy that waits at most 30 s, and a server asking for an hour
        let policy = RetryPolicy(maximumDelay: 30)
        // WHEN it decides
        let result = await decide(policy, status: 503, headers: ["Retry-After": "3600"])
        // THEN it does not retry earlier than asked: the call ends with the server's delay
        guard case .doNotRetryWithError(NetworkError.retryAfter(seconds: 3600, statusCode: 503)) = result else {
            Issue.record("got \(result)")
            return
        }
        #expect(delay(of: await decide(policy, status: 503, headers: ["Retry-After": "30"])) == 30)
    }

    @Test func retryAfterReplacesBackoffAndMalformedFallsBack() async {
        let policy = RetryPolicy(exponentialBackoffScale: 0.5, random: { 0 })
        #expect(delay(of: await decide(policy, status: 429, headers: ["Retry-After": "12"])) == 12)
        #expect(delay(of: await decide(policy, status: 503, headers: ["Retry-After": "later"])) == 0.5)
    }

    @Test func onlyIdempotentMethodsByDefault() async {
        let policy = RetryPolicy(random: { 0 })
        for method in [HTTPMethod.get, .head, .options, .put, .delete, .trace] {
            #expect(delay(of: await decide(policy, status: 503, method: method)) != nil, "\(method)")
        }
        for method in [HTTPMethod.post, .patch, "PURGE"] {
            guard case .doNotRetry = await decide(policy, status: 503, method: method) else {
                Issue.record("\(method) was retried")
                continue
            }
        }
        let posting = RetryPolicy(retryableMethods: [.post], random: { 0 })
        #expect(delay(of: await decide(posting, status: 503, method: .post)) != nil)
    }

    @Test("retryable statuses", arguments: [408, 429, 500, 502, 503, 504])
    func retryableStatus(status: Int) async {
        #expect(delay(of: await decide(RetryPolicy(), status: status)) != nil)
    }

    @Test("statuses that are not retried", arguments: [400, 401, 403, 404, 409, 422, 501])
    func nonRetryableStatus(status: Int) async {
        guard case .doNotRetry = await decide(RetryPolicy(), status: status) else {
            Issue.record("\(status) was retried")
            return
        }
    }

    @Test func transportErrorsWorthRetryingButNeverCancellation() async {
        let policy = RetryPolicy()
        for code in [URLError.Code.timedOut, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet] {
            #expect(delay(of: await decide(policy, error: NetworkError.transportFailed(URLError(code)))) != nil, "\(code)")
        }
        for error in [
            NetworkError.cancelled, NetworkError.transportFailed(URLError(.cancelled)), NetworkError.transportFailed(URLError(.badURL)),
            URLError(.cancelled), NetworkError.missingCredential, CancellationError(),
        ] as [any Error] {
            guard case .doNotRetry = await decide(policy, error: error) else {
                Issue.record("\(error) was retried")
                continue
            }
        }
    }

    @Test func limitCountsThisPolicysRetriesPerCall() async throws {
        // GIVEN a server that keeps failing and a provider that records its waits
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503))
        let sleeps = RecordedDelays()
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), sleep: sleeps.sleep)
        // WHEN the call is made
        await #expect {
            try await provider.response(TestEndpoint())
        } throws: { error in
            if case NetworkError.invalidStatusCode(503) = error { return true } else { return false }
        }
        // THEN two retries with exponential delays, three attempts in all, and no wall-clock sleep
        #expect(sleeps.all == [0.5, 1.0])
        #expect(server.requests.count == 3)
    }

    @Test func composedWithAuthA401RefreshesThenA503BacksOff() async throws {
        // GIVEN an expired token, and an endpoint that is busy once right after the refresh
        let api = MockAuthServer()
        let calls = Recorder<String>()
        api.mock.stub(.get, "/v1/flaky") { request in
            calls.append(request.header("Authorization") ?? "none")
            switch calls.count {
            case 1: return .status(401)
            case 2: return .status(503, headers: ["Retry-After": "2"])
            default: return .json(["ok": true])
            }
        }
        let sleeps = RecordedDelays()
        let (provider, _) = api.makeAuthenticatedProvider(retriers: [RetryPolicy(random: { 0 })], sleep: sleeps.sleep)
        // WHEN the call is made
        let response = try await provider.response(api.resource("/flaky"))
        // THEN one refresh, one backoff honouring Retry-After, and the new token on both retries
        #expect(response.statusCode == 200)
        #expect(api.refreshCount == 1)
        #expect(sleeps.all == [2])
        #expect(calls.all == ["Bearer access-0", "Bearer access-1", "Bearer access-1"])
    }

    @Test func providerCapHoldsOverAuthAndRetryPolicyTogether() async throws {
        let api = MockAuthServer()
        api.mock.stub(.get, "/v1/down") { request in
            request.header("Authorization") == "Bearer access-0" ? .status(401) : .status(503)
        }
        let sleeps = RecordedDelays()
        let (provider, _) = api.makeAuthenticatedProvider(
            retriers: [RetryPolicy(retryLimit: 10, random: { 0 })],
            maximumAttempts: 4, sleep: sleeps.sleep)
        await #expect {
            try await provider.response(api.resource("/down"))
        } throws: { error in
            guard case NetworkError.tooManyAttempts(4, let last) = error, case NetworkError.invalidStatusCode(503) = last else { return false }
            return true
        }
        #expect(api.mock.requests(.get, "/v1/down").count == 4)
        #expect(api.refreshCount == 1)
    }
}
