import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An endpoint of the offline tests.
struct OfflineItem: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "items"
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var body: RequestBody = .none
    var deadline: TimeInterval?
    var offlineBehavior: OfflineBehavior?
    var cachePolicy: CachePolicy?
    var requiresAuthentication = false
}

/// Counts the times the retriers were asked.
struct AskedRetrier: RequestInterceptor {
    let asked = Recorder<Int>()
    func retry(_ request: URLRequest, dueTo error: any Error, response: Response?, context: RequestContext) async -> RetryResult {
        asked.append(1)
        return .retry
    }
}

/// Records the connectivity events the monitors are told.
final class ConnectivityEvents: EventMonitor, @unchecked Sendable {
    let events = Recorder<String>()
    func connectivityWaitDidStart(context: RequestContext) { events.append("start") }
    func connectivityWaitDidEnd(duration: TimeInterval, error: (any Error)?, context: RequestContext) {
        events.append(error.map { "end: \($0)" } ?? "end")
    }
}

/// The provider and the device offline: a call waits for the network instead of spending attempts and
/// backoff on it (rules a–d of "Offline, part 1").
@Suite("Offline: waiting for the network, failing fast, answering from the cache", SuiteTimeLimit.oneMinute)
struct OfflineCallTests {
    let server = MockServer()
    let connectivity = ManualConnectivity()

    /// Stubs `path` so that its first request takes the device offline and fails with `failure`, and the
    /// next ones answer `answer`.
    func failOfflineOnce(_ path: String, method: HTTPMethod = .get, with failure: MockResponse, then answer: MockResponse) {
        let seen = Recorder<Int>()
        let connectivity = self.connectivity
        server.stub(method, path) { _ in
            seen.append(1)
            guard seen.count == 1 else { return answer }
            connectivity.set(online: false)
            return failure
        }
    }

    /// Waits until `count` calls wait for the network, then brings it back.
    func comeBackOnline(afterWaiting count: Int = 1) async {
        await pollUntil { [connectivity] in connectivity.waitingCount == count }
        connectivity.set(online: true)
    }

    @Test(
        "an attempt that fails because the device went offline waits, then sends again: no attempt spent, no backoff, no retrier asked",
        arguments: [
            MockResponse.failure(URLError(.notConnectedToInternet)), .failure(URLError(.networkConnectionLost)),
            .failure(URLError(.cannotConnectToHost)), .failure(URLError(.timedOut)), .json(["a": 1]).closingAfter(bytes: 2),
        ])
    func waitsWithoutSpendingAttempts(_ failure: MockResponse) async throws {
        failOfflineOnce("/v1/items", with: failure, then: .json(["id": 1]))
        let delays = RecordedDelays()
        let asked = AskedRetrier()
        let provider = server.makeProvider(
            connectivity: connectivity, interceptor: Interceptor(interceptors: [RetryPolicy(), asked]), sleep: delays.sleep)
        async let response = provider.response(OfflineItem())
        await comeBackOnline()
        let report = try await response.report
        #expect(report.statusCodes == [200])
        #expect(report.connectivityWait > 0)
        #expect(delays.all.isEmpty)
        #expect(asked.asked.count == 0)
        #expect(server.requests(.get, "/v1/items").count == 2)
    }

    @Test("while the connectivity says online, a lost connection is a transient failure the RetryPolicy retries as before")
    func onlineFailuresAreRetried() async throws {
        server.stub(.get, "/v1/items", .failure(URLError(.notConnectedToInternet)), .json(["id": 1]))
        let delays = RecordedDelays()
        let provider = server.makeProvider(connectivity: connectivity, interceptor: RetryPolicy(random: { 0 }), sleep: delays.sleep)
        let report = try await provider.response(OfflineItem()).report
        #expect(report.statusCodes == [nil, 200])
        #expect(report.connectivityWait == 0)
        #expect(delays.all.count == 1)
    }

    @Test("a call started offline waits, sends nothing until the path is back, then sends once")
    func startedOfflineWaits() async throws {
        server.stub(.get, "/v1/items", .json(["id": 1]))
        connectivity.set(online: false)
        let provider = server.makeProvider(connectivity: connectivity)
        async let response = provider.response(OfflineItem())
        await pollUntil { [connectivity] in connectivity.waitingCount == 1 }
        #expect(server.requests.isEmpty)
        connectivity.set(online: true)
        #expect(try await response.report.statusCodes == [200])
    }

    @Test("with the .fail behaviour (the endpoint's or the provider's), a call started offline throws NetworkError.offline at once")
    func failsFast() async throws {
        server.stub(.get, "/v1/items", .json(["id": 1]))
        connectivity.set(online: false)
        let provider = server.makeProvider(connectivity: connectivity)
        await #expect(throws: NetworkError.offline) { try await provider.response(OfflineItem(offlineBehavior: .fail)) }
        let failing = server.makeProvider(connectivity: connectivity, offlineBehavior: .fail)
        await #expect(throws: NetworkError.offline) { try await failing.response(OfflineItem()) }
        #expect(server.requests.isEmpty)
        connectivity.set(online: true)
        #expect(try await failing.response(OfflineItem()).statusCode == 200)
    }

    @Test("with .fail, an attempt that fails because the device went offline throws NetworkError.offline, asking no retrier")
    func failsFastMidCall() async throws {
        failOfflineOnce("/v1/items", with: .failure(URLError(.notConnectedToInternet)), then: .json(["id": 1]))
        let asked = AskedRetrier()
        let provider = server.makeProvider(connectivity: connectivity, offlineBehavior: .fail, interceptor: asked)
        await #expect(throws: NetworkError.offline) { try await provider.response(OfflineItem()) }
        #expect(asked.asked.count == 0)
    }

    @Test("cancelling a call that waits for the network ends it with NetworkError.cancelled")
    func cancelledWhileWaiting() async throws {
        connectivity.set(online: false)
        let provider = server.makeProvider(connectivity: connectivity)
        let call = Task { try await provider.response(OfflineItem()) }
        await pollUntil { [connectivity] in connectivity.waitingCount == 1 }
        call.cancel()
        await #expect(throws: NetworkError.cancelled) { try await call.value }
        #expect(connectivity.waitingCount == 0)
        #expect(server.requests.isEmpty)
    }

    @Test("a deadline that passes while the call waits for the network ends it with deadlineExceeded")
    func deadlineWhileWaiting() async throws {
        connectivity.set(online: false)
        let events = ConnectivityEvents()
        let provider = server.makeProvider(connectivity: connectivity, monitors: [events])
        await #expect(throws: NetworkError.deadlineExceeded(seconds: 0.2)) { try await provider.response(OfflineItem(deadline: 0.2)) }
        #expect(server.requests.isEmpty)
        await provider.waitForMonitors()
        #expect(events.events.all.first == "start")
        #expect(events.events.all.last?.hasPrefix("end: ") == true)
    }

    @Test("a redirected call whose hop fails offline waits, then follows the redirect again (RFC 9110 §15.4)")
    func redirectThenOffline() async throws {
        server.stub(.get, "/v1/items", .status(302, headers: ["Location": "/v1/moved"]))
        failOfflineOnce("/v1/moved", with: .failure(URLError(.notConnectedToInternet)), then: .json(["id": 1]))
        let provider = server.makeProvider(connectivity: connectivity)
        async let response = provider.response(OfflineItem())
        await comeBackOnline()
        let answer = try await response
        #expect(answer.statusCode == 200)
        #expect(answer.report.statusCodes == [200])
        #expect(server.requests(.get, "/v1/items").count == 2)
    }

    @Test("an upload from a file carrying an Idempotency-Key is sent again from the file after the wait")
    func fileUploadResent() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("offline-\(UUID().uuidString).bin")
        let contents = Data((0..<50_000).map { UInt8($0 % 251) })
        try contents.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        failOfflineOnce("/v1/items", method: .post, with: .failure(URLError(.networkConnectionLost)), then: .status(201))
        let provider = server.makeProvider(connectivity: connectivity)
        let upload = OfflineItem(
            method: .post, headers: ["Idempotency-Key": "upload-1"], body: .file(file, contentType: "application/octet-stream"))
        async let response = provider.response(upload)
        await comeBackOnline()
        #expect(try await response.report.statusCodes == [201])
        let sent = server.requests(.post, "/v1/items")
        #expect(sent.count == 2)
        #expect(sent.last?.body == contents)
    }

    @Test(
        "a POST without an idempotency key whose connection was lost or timed out offline is not re-sent after the wait: the server may have acted on it (RFC 9110 §9.2.2)",
        arguments: [URLError.Code.networkConnectionLost, .timedOut])
    func postWithoutKeyNotResent(_ code: URLError.Code) async throws {
        failOfflineOnce("/v1/items", method: .post, with: .failure(URLError(code)), then: .status(201))
        let events = ConnectivityEvents()
        let provider = server.makeProvider(connectivity: connectivity, monitors: [events])
        await #expect(throws: NetworkError.transportFailed(URLError(code))) {
            // The deadline only ends the test if the call waited for the network (the defect this catches); long
            // enough that a loaded machine never reaches it on the way to the transport error.
            try await provider.response(OfflineItem(method: .post, body: .data(Data("{}".utf8), contentType: "application/json"), deadline: 60))
        }
        #expect(server.requests(.post, "/v1/items").count == 1)
        await provider.waitForMonitors()
        #expect(events.events.all.isEmpty)   // no wait for the network
    }

    @Test("a POST whose connection could not be made offline is sent after the wait: it never went out")
    func postNotConnectedResent() async throws {
        failOfflineOnce("/v1/items", method: .post, with: .failure(URLError(.cannotConnectToHost)), then: .status(201))
        let provider = server.makeProvider(connectivity: connectivity)
        async let response = provider.response(OfflineItem(method: .post, body: .data(Data("{}".utf8), contentType: "application/json")))
        await comeBackOnline()
        #expect(try await response.report.statusCodes == [201])
        #expect(server.requests(.post, "/v1/items").count == 2)
    }

    @Test("a call that waited for the network is then answered 401 and refreshed as usual")
    func refreshAfterWait() async throws {
        let api = MockAuthServer()   // the app holds an expired access token
        let connectivity = ManualConnectivity(isOnline: false)
        let auth = api.makeInterceptor(store: InMemoryCredentialStore(MockAuthServer.initialCredential))
        let provider = api.mock.makeProvider(connectivity: connectivity, interceptor: auth)
        async let resource = provider.response(api.resource("/items/1"))
        await pollUntil { connectivity.waitingCount == 1 }
        connectivity.set(online: true)
        let response = try await resource
        #expect(response.report.statusCodes == [401, 200])
        #expect(try JSONDecoder().decode(MockAuthServer.Resource.self, from: response.data).token == "access-1")
        #expect(api.refreshCount == 1)
    }

    @Test("after a 401 and a refresh, the resent request that fails because the device went offline waits, then sends with the new token")
    func offlineAfterRefresh() async throws {
        let api = MockAuthServer()   // the app holds an expired access token
        let connectivity = ManualConnectivity()
        let served = Recorder<Int>()
        api.setProtectedResponses(
            resource: { resource in
                served.append(1)
                guard served.count == 1 else { return .json(resource) }
                connectivity.set(online: false)
                return .failure(URLError(.notConnectedToInternet))
            }, expired: .status(401))
        let auth = api.makeInterceptor(store: InMemoryCredentialStore(MockAuthServer.initialCredential))
        let provider = api.mock.makeProvider(connectivity: connectivity, interceptor: auth)
        async let resource = provider.response(api.resource("/items/1"))
        await pollUntil { connectivity.waitingCount == 1 }
        connectivity.set(online: true)
        let response = try await resource
        #expect(response.report.statusCodes == [401, 200])
        #expect(response.report.connectivityWait > 0)
        #expect(try JSONDecoder().decode(MockAuthServer.Resource.self, from: response.data).token == "access-1")
        #expect(api.refreshCount == 1)
    }

    @Test("hundreds of calls waiting for the network all resume on one transition")
    func manyWaiters() async throws {
        server.stub(.get, "/v1/items", .json(["id": 1]))
        connectivity.set(online: false)
        let provider = server.makeProvider(connectivity: connectivity)
        let attempts = try await withThrowingTaskGroup(of: Int.self) { group in
            for call in 0..<300 {   // distinct calls: identical concurrent GETs would share one exchange (and one wait)
                group.addTask { try await provider.response(OfflineItem(headers: ["X-Call": "\(call)"])).report.attempts }
            }
            await pollUntil { [connectivity] in connectivity.waitingCount == 300 }
            #expect(server.requests.isEmpty)
            connectivity.set(online: true)
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(attempts.count == 300)
        #expect(attempts.allSatisfy { $0 == 1 })
    }

    @Test("the monitors and the logger are told the wait and its end; the report says how long it was")
    func eventsAndLog() async throws {
        failOfflineOnce("/v1/items", with: .failure(URLError(.notConnectedToInternet)), then: .json(["id": 1]))
        let events = ConnectivityEvents()
        let lines = Recorder<String>()
        let logger = NetworkLogger(sink: LogSink { lines.append($0) })
        let provider = server.makeProvider(connectivity: connectivity, monitors: [events, logger])
        async let response = provider.response(OfflineItem())
        await comeBackOnline()
        _ = try await response
        await provider.waitForMonitors()
        #expect(events.events.all == ["start", "end"])
        #expect(lines.all.contains("⏸ waiting for connectivity"))
        #expect(lines.all.contains { $0.hasPrefix("▶ connectivity back after ") })
        #expect(lines.all.last?.hasSuffix("1 attempt, 8 bytes") == true)
    }
}
