import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The mock behaves as the network would: headers and encoders in stubs, the request timeout, a request
/// a test can await, a routing header nobody sees, and a configurable auth server.
@Suite("Mock behaviour", SuiteTimeLimit.oneMinute)
struct MockBehaviourTests {

    // MARK: Stubs with headers and an encoder

    @Test func rawJSONStubsCarryHeadersAndValueStubsTakeAnEncoder() async throws {
        // GIVEN a raw JSON stub with headers, and a value stub encoded with ISO-8601 dates
        struct Stamp: Codable, Equatable { let at: Date }
        let server = MockServer()
        server.stub(.get, "/v1/raw", .json(raw: #"{"ok":true}"#, statusCode: 201, headers: ["ETag": #""v1""#]))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        server.stub(.get, "/v1/stamp", .json(Stamp(at: Date(timeIntervalSince1970: 0)), encoder: encoder))
        let provider = server.makeProvider()
        // WHEN both are requested
        let raw = try await provider.response(TestEndpoint(path: "/raw"))
        let stamp = try await provider.response(TestEndpoint(path: "/stamp"))
        // THEN the raw one has its status, its header and the JSON type; the value is in ISO-8601
        #expect(raw.statusCode == 201)
        #expect(raw.httpResponse.value(forHTTPHeaderField: "ETag") == #""v1""#)
        #expect(raw.httpResponse.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(String(decoding: stamp.data, as: UTF8.self) == #"{"at":"1970-01-01T00:00:00Z"}"#)
    }

    // MARK: The request timeout

    /// Expects `call` to fail with `transportFailed(.timedOut)`, and not before `low` seconds.
    ///
    /// No upper bound in wall time: a loaded test run stretches it (a cooperative pool busy with
    /// hundreds of tests resumed one call 6.7 s late in CI). What ended the call is in its outcome instead:
    /// each stub answers, and each provider's deadline passes, long after the timeout, and would end the
    /// call with another result.
    private func expectTimedOut(notBefore low: TimeInterval, _ call: () async throws -> Void) async {
        let started = Date()
        await #expect {
            try await call()
        } throws: { error in
            guard case NetworkError.transportFailed(let urlError) = error else { return false }
            return urlError.code == .timedOut
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= low, "ended after \(elapsed) s")
    }

    @Test func aDelayLongerThanTheTimeoutFailsWithTimedOutAtTheTimeout() async throws {
        // GIVEN a stub answering after 30 s, an endpoint with a 1 s timeout and a 20 s deadline
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: 30))
        let provider = server.makeProvider(deadline: 20)
        // WHEN it is requested, THEN it fails with timedOut after about a second, well before the deadline
        await expectTimedOut(notBefore: 0.9) { _ = try await provider.response(TestEndpoint(timeout: 1)) }
    }

    @Test func aResponseThatNeverComesEndsAtTheTimeout() async throws {
        // GIVEN a stub that never answers (a delay of .infinity) and a 1 s timeout
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: .infinity))
        let provider = server.makeProvider(deadline: 20)
        // WHEN it is requested, THEN the timeout ends it, and the server saw the request given up
        await expectTimedOut(notBefore: 0.9) { _ = try await provider.response(TestEndpoint(timeout: 1)) }
        #expect(await server.waitForInterruptions(1))
    }

    @Test func aHandlerThatAwaitsPastTheTimeoutTimesOut() async throws {
        // GIVEN a handler that takes 30 s to answer and a timeout of 0.2 s (rounded up to 1 s)
        let server = MockServer()
        server.stub(.get, "/v1/users/1") { _ in
            try await Task.sleep(nanoseconds: 30_000_000_000)
            return .status(200)
        }
        let provider = server.makeProvider(deadline: 20)
        // WHEN it is requested, THEN it fails with timedOut at the whole second
        await expectTimedOut(notBefore: 0.9) { _ = try await provider.response(TestEndpoint(timeout: 0.2)) }
    }

    @Test func theTimeoutIsIdleTimeBetweenChunksNotTheWholeBody() async throws {
        // GIVEN a 5 s timeout; one body whose chunks come 0.5 s apart (6 s in all: longer than the timeout,
        // each gap a tenth of it; the mock keeps them by the clock, so a busy task pool cannot stretch one
        // past it), one that stalls for 30 s after its first chunk
        let server = MockServer()
        server.stub(.get, "/v1/steady", .chunked(Array(repeating: "x", count: 12), interval: 0.5))
        server.stub(.get, "/v1/stalled") { _ in
            var response = MockResponse.chunked(["a", "b"])
            response.chunks[1].delay = 30
            return response
        }
        let provider = server.makeProvider(deadline: 20)
        // WHEN both are requested at once
        async let steady = provider.response(TestEndpoint(path: "/steady", timeout: 5))
        // THEN the stalled one fails with timedOut once no byte came for 5 s, and the steady body arrives
        // whole although it took longer than the timeout
        await expectTimedOut(notBefore: 4.9) { _ = try await provider.response(TestEndpoint(path: "/stalled", timeout: 5)) }
        #expect(String(decoding: try await steady.data, as: UTF8.self) == String(repeating: "x", count: 12))
    }

    @Test func aBusyTaskPoolStretchesNoPauseOfAStubPastTheTimeout() async throws {
        // GIVEN a 1 s timeout, and a stream whose lines come 0.2 s apart, read until its first line came
        let server = MockServer()
        server.stub(.get, "/v1/steady", .chunked((1...10).map { "line \($0)\n" }, interval: 0.2))
        let provider = server.makeProvider(deadline: 20)
        let lines = Recorder<String>()
        let firstLineOrEnd = Signal()
        let reader = Task {
            defer { firstLineOrEnd.fire() }   // also when the call fails: the test never waits forever
            for try await line in try await provider.stream(TestEndpoint(path: "/steady", timeout: 1)).lines {
                lines.append(line)
                firstLineOrEnd.fire()
            }
        }
        await firstLineOrEnd.wait()
        // WHEN every thread of the cooperative pool is held for 2.5 s (as hundreds of busy tests can hold
        // it) while the rest is sent
        await holdTheCooperativePool(for: 2.5)
        // THEN every line arrives: the mock keeps its pauses by the clock, as a server would, so none grew
        // past the timeout
        try await reader.value
        #expect(lines.all == (1...10).map { "line \($0)" })
    }

    @Test func aStubStartedLateByABusyTaskPoolHasTheWholeTimeout() async throws {
        // GIVEN a stub that answers at once, and a request with a 1 s timeout that a plain URLSession
        // sends from a serial queue of the test's own once the cooperative pool is held (the stub runs in
        // a task of the pool, so it can only start once the pool is free again; a serial queue gets a
        // thread of its own, where on Linux the global queues' threads are the pool's)
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(204))
        let session = URLSession(configuration: server.makeConfiguration())
        defer { session.invalidateAndCancel() }
        var request = server.route(URLRequest(url: URL(string: "https://api.example.com/v1/users/1")!))
        request.timeoutInterval = 1
        let statuses = Recorder<Int>()
        let errors = Recorder<String>()
        let completed = Signal()
        DispatchQueue(label: "aStubStartedLateByABusyTaskPoolHasTheWholeTimeout").asyncAfter(deadline: .now() + 0.3) { [request] in
            session.dataTask(with: request) { _, response, error in
                if let error { errors.append("\(error)") }
                if let http = response as? HTTPURLResponse { statuses.append(http.statusCode) }
                completed.fire()
            }.resume()
        }
        // WHEN the pool is held for 2.5 s, twice the timeout
        await holdTheCooperativePool(for: 2.5)
        // THEN the stub's answer arrives: the time the test process took to start the stub is not the
        // server's, and the timeout counts from the stub's start
        await completed.wait()
        #expect(errors.all.isEmpty)
        #expect(statuses.all == [204])
        #expect(server.requests.count == 1)
    }

    /// Holds every thread of the cooperative pool until `seconds` from now: four tasks a processor
    /// (more than the pool is wide; libdispatch on Linux may add threads up to twice the processors when
    /// all are blocked) each block their thread until then; any that starts after that returns at once.
    private func holdTheCooperativePool(for seconds: TimeInterval) async {
        let end = Date().addingTimeInterval(seconds)
        let tasks = max(64, 4 * ProcessInfo.processInfo.activeProcessorCount)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks { group.addTask { Self.blockThisThread(until: end) } }
        }
    }

    private static func blockThisThread(until end: Date) {
        Thread.sleep(until: end)
    }

    @Test func aRequestWithoutItsOwnTimeoutUsesTheSessions() async throws {
        // GIVEN a stub that never answers, and a session whose request timeout is 1 s
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: .infinity))
        let configuration = server.makeConfiguration()
        configuration.timeoutIntervalForRequest = 1
        let provider = NetworkProvider(
            configuration: configuration, interceptor: Interceptor(adapters: [ClosureAdapter { request, _ in server.route(request) }]), deadline: 20)
        // WHEN an endpoint without a timeout is requested, THEN the session's timeout ends it
        await expectTimedOut(notBefore: 0.9) { _ = try await provider.response(TestEndpoint()) }
    }

    // MARK: Awaiting a request

    @Test func nextRequestReturnsARequestThatArrivedBeforeTheAwaitOnlyOnce() async throws {
        // GIVEN a request the server already received
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(204))
        let provider = server.makeProvider()
        _ = try await provider.response(TestEndpoint())
        // WHEN a test awaits the next request, twice
        let first = try await server.nextRequest(matching: .get, "/v1/users/1")
        // THEN the first await finds it, and the second does not find it again (it times out)
        #expect(first.path == "/v1/users/1")
        await #expect(throws: MockServer.WaitTimedOut.self) {
            try await server.nextRequest(timeout: 0.2)
        }
    }

    @Test func nextRequestWaitsForAMatchingRequest() async throws {
        // GIVEN a test awaiting a POST to /v1/items while a GET arrives first
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(204))
        server.stub(.post, "/v1/items", .status(201))
        let provider = server.makeProvider()
        let awaited = Task { try await server.nextRequest(matching: .post, "/v1/items") }
        _ = try await provider.response(TestEndpoint())
        // WHEN the POST arrives
        _ = try await provider.response(TestEndpoint(path: "/items", method: .post, body: .json(["name": "pen"])))
        // THEN the await returns it, body and all
        let request = try await awaited.value
        #expect(request.method == "POST")
        #expect(try request.decodeBody(as: [String: String].self) == ["name": "pen"])
    }

    @Test func nextRequestEndsWhenTheAwaitingTaskIsCancelled() async throws {
        // GIVEN a test awaiting a request that never comes
        let server = MockServer()
        let awaited = Task { try await server.nextRequest(timeout: 30) }
        // WHEN the awaiting task is cancelled
        awaited.cancel()
        // THEN it throws CancellationError, not WaitTimedOut: the cancellation ended it, not the timeout
        await #expect(throws: CancellationError.self) { try await awaited.value }
    }

    // MARK: The routing header

    @Test func theRoutingHeaderReachesNoMonitorLoggerOrResponse() async throws {
        // GIVEN a provider with a monitor that keeps every request it is shown, and a verbose logger
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(User(id: 1, name: "Kim")))
        let seen = Recorder<URLRequest>()
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            interceptor: RetryPolicy(random: { 0 }),
            monitors: [RequestCollector(requests: seen), NetworkLogger(verbosity: .verbose, sink: LogSink { lines.append($0) })],
            sleep: RecordedDelays().sleep)
        // WHEN a call is retried once and succeeds
        let response = try await provider.response(TestEndpoint())
        await provider.waitForMonitors()
        // THEN the header is on none of the requests shown, nor in the log, the cURL, or the recording
        let shown = seen.all + [response.request]
        #expect(seen.count >= 5)
        for request in shown {
            #expect(request.value(forHTTPHeaderField: MockURLProtocol.serverHeader) == nil)
            #expect(!request.cURLDescription.lowercased().contains("x-mock-server"))
        }
        #expect(!lines.all.isEmpty)
        #expect(!lines.all.joined().lowercased().contains("x-mock-server"))
        #expect(server.requests.allSatisfy { $0.header(MockURLProtocol.serverHeader) == nil })
        #expect(server.requests.count == 2)
    }

    // MARK: The auth server's answer

    @Test func theAuthServerAnswersTokensInTheAppsEnvelope() async throws {
        // GIVEN an auth server whose refresh answer is wrapped in the app's envelope, and the app's own
        // interceptor that reads it from there
        struct Envelope<Payload: Codable>: Codable {
            let status: Int
            let data: Payload
        }
        let api = MockAuthServer()
        api.setTokensResponse { tokens in .json(Envelope(status: 200, data: tokens)) }
        let baseURL = api.baseURL
        let auth = AuthInterceptor(baseURL: baseURL, store: InMemoryCredentialStore(MockAuthServer.initialCredential)) { credential, network in
            let answer = try await network.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken),
                as: Envelope<MockAuthServer.Tokens>.self)
            return Credential(accessToken: answer.data.accessToken, refreshToken: answer.data.refreshToken)
        }
        let provider = api.mock.makeProvider(interceptor: auth)
        // WHEN a protected call meets the expired token
        let resource = try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self)
        // THEN the app's wiring refreshed once through the envelope and sent the new token
        #expect(resource.token == "access-1")
        #expect(api.refreshCount == 1)
        let refresh = try #require(api.mock.requests(.post, "/v1/auth/refresh").first)
        #expect(String(decoding: refresh.body, as: UTF8.self).contains("refresh-0"))
    }

    @Test func aCancelledWaitDoesNotSwallowTheRequestItFound() async throws {
        // GIVEN a request the server already received
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(204))
        _ = try await server.makeProvider().response(TestEndpoint())
        // WHEN a wait starts in a task that is already cancelled
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await server.nextRequest(matching: .get, "/v1/users/1")
        }
        _ = await cancelled.result
        // THEN a later wait still gets that request (whatever the cancelled one returned)
        let later = try await server.nextRequest(matching: .get, "/v1/users/1", timeout: 5)
        #expect(later.path == "/v1/users/1")
    }
}

/// A monitor that keeps every request it is shown, and each response's request.
private struct RequestCollector: EventMonitor {
    let requests: Recorder<URLRequest>

    func requestDidBuild(_ request: URLRequest, context: RequestContext) { requests.append(request) }
    func requestDidAdapt(_ request: URLRequest, context: RequestContext) { requests.append(request) }
    func taskDidStart(_ request: URLRequest, context: RequestContext) { requests.append(request) }
    func responseDidArrive(_ response: Response, duration: TimeInterval, context: RequestContext) { requests.append(response.request) }
    func validationDidFail(_ response: Response, error: any Error, context: RequestContext) { requests.append(response.request) }
    func requestDidFinish(
        _ request: URLRequest, result: Result<Response, any Error>, attempts: Int, duration: TimeInterval, context: RequestContext
    ) {
        requests.append(request)
        if case .success(let response) = result { requests.append(response.request) }
    }
}
