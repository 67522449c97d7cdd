import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Keeps what `attemptDidFail` is told.
private struct FailedAttempts: EventMonitor {
    let told = Recorder<String>()
    func attemptDidFail(
        _ request: URLRequest, response: Response?, error: any Error, attempt: Int, duration: TimeInterval, context: RequestContext
    ) {
        told.append("\(attempt) \(request.url?.path ?? "?") \(response.map { "\($0.statusCode)" } ?? "none") \(Redactor().error(error))")
    }
}

/// The `failed N` and `finished … after N` events of a ``RecordingMonitor``'s log.
private func attemptsAndEnd(_ log: [String]) -> [String] {
    log.filter { $0.hasPrefix("failed") || $0.hasPrefix("finished") }.map { line in
        line.hasPrefix("finished") ? "finished after \(line.split(separator: " ").last ?? "")" : line
    }
}

@Suite("Monitoring: every failed attempt is told", SuiteTimeLimit.oneMinute)
struct AttemptEventTests {
    @Test func aTransportFailureWithoutRetriersIsToldAsTheCallsOnlyAttempt() async throws {
        // GIVEN a provider without interceptors, and a connection that drops
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .failure(URLError(.networkConnectionLost)))
        let monitor = FailedAttempts()
        let provider = server.makeProvider(monitors: [monitor])
        // WHEN the call fails
        await #expect(throws: NetworkError.self) { _ = try await provider.response(TestEndpoint()) }
        await provider.waitForMonitors()
        // THEN the attempt was told, without a response, with its error
        #expect(monitor.told.all == ["1 /v1/users/1 none The request failed without a complete response: URLError -1005 (.networkConnectionLost)."])
    }

    @Test func aSuccessfulAttemptIsNeverToldFailed() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), monitors: [monitor])
        _ = try await provider.response(TestEndpoint())
        await provider.waitForMonitors()
        #expect(monitor.log.all == ["built", "adapted", "started", "response 200 21B", "finished 200 after 1"])
    }

    @Test func eachFailedAttemptIsToldExactlyOnceAcrossRetriesInOrder() async throws {
        // GIVEN a server busy three times, then answering
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .status(502), .status(503), .json(User(id: 1, name: "Kim")))
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(
            interceptor: RetryPolicy(retryLimit: 3, random: { 0 }), maximumAttempts: 4, monitors: [monitor], sleep: RecordedDelays().sleep)
        // WHEN the call is retried until it succeeds
        _ = try await provider.response(TestEndpoint())
        await provider.waitForMonitors()
        // THEN each failed attempt was told once, after its validation and before its retry decision
        let log = monitor.log.all.filter { $0.hasPrefix("invalid") || $0.hasPrefix("failed") || $0.hasPrefix("retry") || $0.hasPrefix("finished") }
        #expect(log.count == 10)
        for (index, status) in [503, 502, 503].enumerated() {
            #expect(log[3 * index] == "invalid \(status)")
            #expect(log[3 * index + 1] == "failed \(index + 1) \(status)")
            #expect(log[3 * index + 2].hasPrefix("retry \(index + 1): "))
        }
        #expect(log.last == "finished 200 after 4")
    }

    @Test func aCacheHitMakesNoAttemptAndTellsNoFailure() async throws {
        // GIVEN a response stored fresh for 60 s (RFC 9111 §4.2)
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim"), headers: ["Cache-Control": "max-age=60"]))
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(cache: MemoryResponseCache(), monitors: [monitor])
        _ = try await provider.response(TestEndpoint())
        await provider.waitForMonitors()
        let first = monitor.log.count
        // WHEN it is asked for again, THEN the cache answers after zero attempts, none told failed
        #expect(try await provider.response(TestEndpoint()).report.cache == .hit)
        await provider.waitForMonitors()
        #expect(Array(monitor.log.all.dropFirst(first)) == ["built", "finished 200 after 0"])
    }

    @Test func anAttemptCancelledWhileItRunsIsToldOnce() async throws {
        // GIVEN a server that answers after 50 s
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: 50))
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(monitors: [monitor])
        // WHEN the call is cancelled once its request arrived
        let call = Task { try await provider.response(TestEndpoint()) }
        _ = try await server.nextRequest(matching: .get, "/v1/users/1")
        call.cancel()
        await #expect(throws: NetworkError.cancelled) { _ = try await call.value }
        await provider.waitForMonitors()
        // THEN its one attempt was told failed, without a response, then the call finished after it
        #expect(attemptsAndEnd(monitor.log.all) == ["failed 1", "finished after 1"])
    }

    @Test func anAttemptStoppedByTheDeadlineIsToldOnce() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: 50))
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(deadline: 1, monitors: [monitor])
        await #expect(throws: NetworkError.deadlineExceeded(seconds: 1)) { _ = try await provider.response(TestEndpoint()) }
        await provider.waitForMonitors()
        // The attempt stopped is told, and counted; on a machine so loaded that the deadline passed before
        // it could start, none was made, none told, none counted.
        let told = attemptsAndEnd(monitor.log.all)
        #expect(told == ["failed 1", "finished after 1"] || told == ["finished after 0"])
    }

    /// A GET is coalesced by default: the lone caller whose deadline passes is its exchange's last caller,
    /// and the exchange (which has no deadline of its own) ends with that caller's deadline, not as
    /// cancelled; its end is told before the call returns, as a call of its own would be.
    @Test func aCoalescedCallStoppedByItsDeadlineIsToldSoBeforeItReturns() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: 50))
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(deadline: 0.5, monitors: [monitor])
        await #expect(throws: NetworkError.deadlineExceeded(seconds: 0.5)) { _ = try await provider.response(TestEndpoint()) }
        await provider.waitForMonitors()
        let ends = monitor.log.all.filter { $0.hasPrefix("finished") }
        let deadline = "finished \(NetworkError.deadlineExceeded(seconds: 0.5))"
        #expect(ends == ["\(deadline) after 1"] || ends == ["\(deadline) after 0"])
    }

    @Test func aRetryDelayThatOverrunsTheDeadlineStartsNoAttempt() async throws {
        // GIVEN a server busy once, a retrier asking for 10 ms, a 2 s deadline, and a sleep that overruns it
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(User(id: 1, name: "Kim")))
        let retrier = Interceptor(adapters: [], retriers: [ClosureRetrier { _, _, _, _ in .retryWithDelay(0.01) }])
        let start = DispatchTime.now()
        let overrun: @Sendable (TimeInterval) async throws -> Void = { _ in
            let left = 2.2 - start.secondsSince
            if left > 0 { try await Task.sleep(nanoseconds: UInt64(left * 1_000_000_000)) }
        }
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(interceptor: retrier, deadline: 2, monitors: [monitor], sleep: overrun)
        // WHEN the call fails once and its delay ends after the deadline
        await #expect(throws: NetworkError.deadlineExceeded(seconds: 2)) { _ = try await provider.response(TestEndpoint()) }
        await provider.waitForMonitors()
        // THEN no second attempt was made, and the call counts only the attempt it told failed. (On a machine
        // loaded enough that the first attempt outlives the deadline, that attempt is stopped instead: the
        // count still matches what was told.)
        #expect(server.requests.count <= 1)
        let told = attemptsAndEnd(monitor.log.all)
        let failed = told.filter { $0.hasPrefix("failed") }
        #expect(failed.count <= 1)
        #expect(told.last == "finished after \(failed.count)")
    }

    @Test func aCallCancelledDuringItsRetryDelayCountsOnlyTheAttemptsItMade() async throws {
        // GIVEN a server busy once, and a retry delay during which the call is cancelled
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(User(id: 1, name: "Kim")))
        let cancelling: @Sendable (TimeInterval) async throws -> Void = { _ in withUnsafeCurrentTask { $0?.cancel() } }
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), monitors: [monitor], sleep: cancelling)
        // WHEN the call is made
        await #expect(throws: NetworkError.cancelled) { _ = try await provider.response(TestEndpoint()) }
        await provider.waitForMonitors()
        // THEN it made one attempt, told failed, and finished after one
        #expect(server.requests.count == 1)
        #expect(attemptsAndEnd(monitor.log.all) == ["failed 1 503", "finished after 1"])
    }
}

extension DispatchTime {
    /// Seconds from this time until now.
    fileprivate var secondsSince: TimeInterval {
        Double(DispatchTime.now().uptimeNanoseconds - uptimeNanoseconds) / 1_000_000_000
    }
}
