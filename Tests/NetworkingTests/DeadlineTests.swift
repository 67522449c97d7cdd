import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A call ends with a typed error when its overall deadline passes, whatever the server does.
@Suite("Deadline", SuiteTimeLimit.oneMinute)
struct DeadlineTests {
    func isDeadlineExceeded(_ error: any Error, _ seconds: TimeInterval) -> Bool {
        guard case NetworkError.deadlineExceeded(seconds) = error else { return false }
        return true
    }

    @Test func anAttemptStillRunningAtTheDeadlineIsCancelled() async throws {
        // GIVEN a server that answers after 50 s, and a provider whose calls have 1 s
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: 50))
        let provider = server.makeProvider(deadline: 1)
        // WHEN a call is made, THEN it ends with the deadline error (not after 50 s: the suite's limit is 1 min)
        await #expect { try await provider.response(TestEndpoint()) } throws: { isDeadlineExceeded($0, 1) }
        // and the request was stopped
        #expect(server.interruptedCount == 1)
    }

    @Test func aDeadlineThatPassesWhileTheInterceptorsWaitEndsTheCallBeforeSending() async throws {
        // GIVEN an adapter that takes 0.3 s (as one waiting for a token refresh would), a 0.2 s deadline,
        // and a server that would answer after 30 s
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: 30))
        let slow = ClosureAdapter { request, _ in
            try await Task.sleep(nanoseconds: 300_000_000)
            return request
        }
        let provider = server.makeProvider(interceptor: Interceptor(adapters: [slow]), deadline: 0.2)
        // WHEN calls are made, THEN each ends with the deadline error and nothing is sent
        for _ in 0..<5 {
            await #expect { try await provider.response(TestEndpoint()) } throws: { isDeadlineExceeded($0, 0.2) }
        }
        #expect(server.requests.isEmpty)
    }

    @Test func anEndpointsDeadlineWinsOverTheProviders() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: 50))
        struct Quick: Endpoint {
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/users/1" }
            var deadline: TimeInterval? { 1 }
        }
        await #expect { try await server.makeProvider(deadline: .infinity).response(Quick()) } throws: { isDeadlineExceeded($0, 1) }
    }

    @Test func aRetryDelayThatWouldEndAfterTheDeadlineIsNotWaitedFor() async throws {
        // GIVEN a server that asks for a retry in 20 s, a policy that would wait that long, and a 5 s deadline
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503, headers: ["Retry-After": "20"]), .status(200))
        let delays = RecordedDelays()
        let provider = server.makeProvider(interceptor: RetryPolicy(maximumDelay: 30), deadline: 5, sleep: delays.sleep)
        // WHEN the call fails once
        await #expect { try await provider.response(TestEndpoint()) } throws: { isDeadlineExceeded($0, 5) }
        // THEN it ended at once, without waiting and without a second attempt
        #expect(delays.all.isEmpty)
        #expect(server.requests.count == 1)
    }

    @Test func retriesWithinTheDeadlineGoOn() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503, headers: ["Retry-After": "2"]), .status(200))
        let delays = RecordedDelays()
        // A deadline far from what two mock round trips take, even under ThreadSanitizer on a loaded machine.
        let provider = server.makeProvider(interceptor: RetryPolicy(), deadline: 60, sleep: delays.sleep)
        #expect(try await provider.response(TestEndpoint()).statusCode == 200)
        #expect(delays.all == [2])
    }

    @Test(arguments: [Double.nan, 0, -3])
    func aDeadlineThatIsNotPositiveIsRefused(_ seconds: Double) async {
        let server = MockServer()
        await #expect {
            try await server.makeProvider(deadline: seconds).response(TestEndpoint())
        } throws: { error in
            guard case NetworkError.invalidRequest(field: "deadline", _) = error else { return false }
            return true
        }
        #expect(server.requests.isEmpty)
    }

    @Test func descriptionsOfAnyValueNeverTrap() {
        for seconds in [Double.nan, -1e300, -.infinity, .infinity, 1e300, -1] {
            #expect(!"\(NetworkError.deadlineExceeded(seconds: seconds))".isEmpty)
            #expect(!"\(NetworkError.retryAfter(seconds: seconds, statusCode: 503))".isEmpty)
        }
    }

    @Test func theErrorSaysWhatHappened() {
        #expect("\(NetworkError.deadlineExceeded(seconds: 1.5))" == "The call did not finish within its deadline of 1.5 seconds, retries included.")
        #expect("\(NetworkError.deadlineExceeded(seconds: 120))" == "The call did not finish within its deadline of 120 seconds, retries included.")
    }
}

/// A response body larger than the call allows ends in a typed error, never in the app's decoder.
@Suite("Response size limit")
struct ResponseSizeTests {
    func isTooLarge(_ error: any Error, _ limit: Int) -> Bool {
        guard case NetworkError.responseTooLarge(limit) = error else { return false }
        return true
    }

    @Test func aBodyOverTheLimitIsRefused() async throws {
        // GIVEN a server answering 2,048 bytes, and a provider allowing 1,024
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse(body: Data(count: 2_048)))
        let provider = server.makeProvider(maximumResponseSize: 1_024)
        // WHEN the call is made, THEN it fails with the limit, and is not retried
        await #expect { try await provider.response(TestEndpoint()) } throws: { isTooLarge($0, 1_024) }
        #expect(server.requests.count == 1)
        // and a body at the limit is fine
        server.stub(.get, "/v1/users/1", MockResponse(body: Data(count: 1_024)))
        #expect(try await provider.response(TestEndpoint()).data.count == 1_024)
    }

    @Test func aDeclaredLengthOverTheLimitIsRefused() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse(headers: ["Content-Length": "999999999"], body: Data(count: 10)))
        await #expect { try await server.makeProvider(maximumResponseSize: 1_024).response(TestEndpoint()) } throws: { isTooLarge($0, 1_024) }
    }

    @Test(arguments: [("HEAD", 200), ("GET", 304), ("GET", 204)])
    func aLengthDeclaredForABodyThatIsNotSentIsFine(_ method: String, _ status: Int) async throws {
        // GIVEN a HEAD (or a 204/304) that declares the size of a resource larger than the limit
        let server = MockServer()
        server.stub(HTTPMethod(rawValue: method), "/v1/users/1", MockResponse(statusCode: status, headers: ["Content-Length": "100000000"]))
        // WHEN it is answered, THEN the call succeeds: no body came
        let response = try await server.makeProvider(maximumResponseSize: 1_024)
            .response(TestEndpoint(method: HTTPMethod(rawValue: method), acceptableStatusCodes: [200, 204, 304]))
        #expect(response.statusCode == status && response.data.isEmpty)
    }

    @Test func anEndpointsLimitWinsOverTheProviders() async throws {
        struct Small: Endpoint {
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/users/1" }
            var maximumResponseSize: Int? { 10 }
        }
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse(body: Data(count: 100)))
        await #expect { try await server.makeProvider().response(Small()) } throws: { isTooLarge($0, 10) }
        #expect("\(NetworkError.responseTooLarge(limit: 10))" == "The response body is larger than the 10 bytes this call allows.")
    }
}
