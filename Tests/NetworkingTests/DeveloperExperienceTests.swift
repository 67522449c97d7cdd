import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Records the names of the events a monitor receives, in order.
private final class EventLog: EventMonitor, @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return names
    }

    private func add(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        names.append(name)
    }

    func requestDidBuild(_ request: URLRequest, context: RequestContext) { add("build") }
    func requestDidAdapt(_ request: URLRequest, context: RequestContext) { add("adapt") }
    func taskDidStart(_ request: URLRequest, context: RequestContext) { add("start") }
    func responseDidArrive(_ response: Response, duration: TimeInterval, context: RequestContext) { add("response \(response.statusCode)") }
    func validationDidFail(_ response: Response, error: any Error, context: RequestContext) { add("invalid") }
    func retryDidDecide(_ result: RetryResult, attempt: Int, error: any Error, context: RequestContext) { add("retry") }
    func requestDidFinish(_ request: URLRequest, result: Result<Response, any Error>, attempts: Int, duration: TimeInterval, context: RequestContext) {
        add("finish \(attempts)")
    }
}

@Suite("Developer experience")
struct DeveloperExperienceTests {
    @Test func aPlainAdapterOrRetrierIsEnoughForOneCall() async throws {
        // GIVEN a server that is busy once
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(["id": 1]))
        server.stub(.get, "/v1/users/2", .json(["id": 2]))
        let delays = RecordedDelays()
        let provider = server.makeProvider(sleep: delays.sleep)
        // WHEN one call gets a plain adapter, and another a plain retrier
        let traced = try await provider.response(
            TestEndpoint(path: "/users/2"),
            adapter: ClosureAdapter { request, _ in
                var request = request
                request.setValue("trace-1", forHTTPHeaderField: "X-Trace-ID")
                return request
            })
        let retried = try await provider.response(TestEndpoint(), retrier: RetryPolicy())
        // THEN the adapter ran for its call, and the retrier retried the 503
        #expect(traced.statusCode == 200)
        #expect(server.requests(.get, "/v1/users/2").first?.header("X-Trace-ID") == "trace-1")
        #expect(retried.statusCode == 200)
        #expect(delays.all.count == 1)
    }

    @Test func theResponseSaysHowManyAttemptsTheCallTookAndTheirStatuses() async throws {
        // GIVEN a server that drops once, then is busy once, then answers
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .failure(URLError(.networkConnectionLost)), .status(503), .json(["id": 1]))
        let provider = server.makeProvider(interceptor: RetryPolicy(retryLimit: 3), sleep: RecordedDelays().sleep)
        // WHEN the call is made
        let response = try await provider.response(TestEndpoint())
        // THEN the report lists every attempt, with no status for the dropped one
        #expect(response.report.attempts == 3)
        #expect(response.report.statusCodes == [nil, 503, 200])
        #expect(response.report.duration > 0)
    }

    @Test func monitorEventsArriveInTheDocumentedOrderAndWaitForMonitorsNeedsNoPolling() async throws {
        // GIVEN a monitor, and a server that is busy once
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(["id": 1]))
        let log = EventLog()
        let provider = server.makeProvider(interceptor: RetryPolicy(), monitors: [log], sleep: RecordedDelays().sleep)
        // WHEN a call returns and the test waits for the monitors
        _ = try await provider.response(TestEndpoint())
        await provider.waitForMonitors()
        // THEN every event has been delivered, in order
        #expect(
            log.all == [
                "build",
                "adapt", "start", "response 503", "invalid", "retry",
                "adapt", "start", "response 200",
                "finish 2",
            ])
    }

    @Test func networkErrorsCompareInOneLine() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(404))
        server.stub(.get, "/v1/offline", .failure(URLError(.notConnectedToInternet)))
        let provider = server.makeProvider()
        await #expect(throws: NetworkError.invalidStatusCode(404)) { try await provider.response(TestEndpoint()) }
        await #expect(throws: NetworkError.transportFailed(URLError(.notConnectedToInternet))) {
            try await provider.response(TestEndpoint(path: "/offline"))
        }
        // payloads count: another status, another URL error code, another carried error are different
        #expect(NetworkError.invalidStatusCode(404) != .invalidStatusCode(500))
        #expect(NetworkError.transportFailed(URLError(.timedOut)) != .transportFailed(URLError(.cannotFindHost)))
        #expect(
            NetworkError.tooManyAttempts(3, lastError: NetworkError.invalidStatusCode(503))
                == .tooManyAttempts(3, lastError: NetworkError.invalidStatusCode(503)))
        #expect(NetworkError.refreshFailed(URLError(.timedOut)) != .refreshFailed(CocoaError(.fileNoSuchFile)))
        #expect(NetworkError.cancelled != .sessionExpired)
        // an Equatable error of the app's is compared by its own ==; another by type, domain and code
        struct AppError: Error, Equatable { let code: String }
        struct OpaqueError: Error { let code: String }
        #expect(NetworkError.refreshFailed(AppError(code: "E001")) == .refreshFailed(AppError(code: "E001")))
        #expect(NetworkError.refreshFailed(AppError(code: "E001")) != .refreshFailed(AppError(code: "E999")))
        #expect(NetworkError.refreshFailed(OpaqueError(code: "a")) == .refreshFailed(OpaqueError(code: "b")))
        #expect(NetworkError.refreshFailed(AppError(code: "a")) != .refreshFailed(OpaqueError(code: "a")))
    }

    @Test func aFakeProviderCanReturnAResponseWithItsOwnReport() throws {
        let http = try #require(HTTPURLResponse(url: URL(string: "https://api.example.com")!, statusCode: 200, httpVersion: nil, headerFields: nil))
        let response = Response(
            data: Data(), httpResponse: http, request: URLRequest(url: http.url!),
            report: CallReport(statusCodes: [401, 200], duration: 0.2))
        #expect(response.report.attempts == 2)
    }

    @Test func theInMemoryStoreReadsLikeAnyStore() async throws {
        // `try await` on the concrete store, as on the protocol, with no warning (the build has none)
        let store = InMemoryCredentialStore()
        try await store.save(Credential(accessToken: "a", refreshToken: "r"))
        #expect(try await store.load()?.accessToken == "a")
        try await store.delete()
        #expect(try await store.load() == nil)
    }
}
