import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 33, part 2: at most `maximumCalls` requests in flight, at most `maximumCallsPerHost` to one
/// origin (scheme, host and port, RFC 6454 §4), the others queued by priority, first come first served
/// within one.
@Suite("Scheduling: limits on requests in flight, in all and per host", SuiteTimeLimit.threeMinutes)
struct SchedulingLimitTests {
    let server = MockServer()

    /// Stubs every path of every host with an answer after a short pause, counting in `meter`.
    func stubBusy(_ meter: ConcurrencyMeter) {
        server.stub { request in
            let host = request.url.host ?? ""
            meter.enter(host)
            defer { meter.leave(host) }
            try await Task.sleep(nanoseconds: 2_000_000)   // keeps the requests overlapping; no timing is asserted
            return .json(["path": request.path])
        }
    }

    @Test("1,000 concurrent calls to one host: never more than maximumCallsPerHost at the server, all answered", arguments: [1, 6])
    func perHostLimitHolds(limit: Int) async throws {
        let meter = ConcurrencyMeter()
        stubBusy(meter)
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: limit))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<1_000 { group.addTask { try await provider.response(ScheduledCall("items/\(index)")).statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 1_000 && statuses.allSatisfy { $0 == 200 })
        #expect(server.requests.count == 1_000)
        #expect(meter.peak("api.example.com") <= limit)
        #expect(meter.peak("api.example.com") >= 1)
        #expect(provider.slots.inFlightCount == 0 && provider.slots.waitingCount == 0)
    }

    @Test("calls to three hosts: at most maximumCalls in all and maximumCallsPerHost to each, all answered")
    func globalLimitHolds() async throws {
        let meter = ConcurrencyMeter()
        stubBusy(meter)
        let provider = makeScheduledProvider(server, Scheduling(maximumCalls: 8, maximumCallsPerHost: 4))
        let hosts = ["a.example.com", "b.example.com", "c.example.com"]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<900 {
                group.addTask { _ = try await provider.response(ScheduledCall("items/\(index)", host: hosts[index % 3])) }
            }
            try await group.waitForAll()
        }
        #expect(server.requests.count == 900)
        #expect(meter.peak <= 8)
        for host in hosts { #expect(meter.peak(host) <= 4) }
        #expect(provider.slots.inFlightCount == 0)
    }

    @Test("the per-host limit is per origin: a host at its limit holds back none of another's calls (RFC 6454 §4)")
    func hostsAreIndependent() async throws {
        let held = HeldAnswers()
        held.stub(server, "/v1/held")
        server.stub(.get, "/v1/other", .json(["ok": true]))
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 2))
        let blockers = (0..<2).map { _ in Task { try await provider.response(ScheduledCall("held")) } }
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        let queued = Task { try await provider.response(ScheduledCall("held")) }   // a third to the busy host waits
        await waitUntilQueued(1, in: provider)
        // Another host, and the same host on another port or scheme, are other origins: sent at once.
        for host in ["b.example.com", "api.example.com:8443"] {
            let other = try await provider.response(ScheduledCall("other", host: host))
            #expect(other.statusCode == 200 && other.report.queueWait == 0)
        }
        #expect(server.requests(.get, "/v1/held").count == 2)
        held.release()
        for blocker in blockers { _ = try await blocker.value }
        #expect(try await queued.value.report.queueWait > 0)
    }

    @Test("high before normal before low, first come first served within a priority, and the priority reaches the session task")
    func priorities() async throws {
        let held = HeldAnswers()
        held.stub(server, "/v1/held")
        server.stub { request in .json(["path": request.path]) }
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1))
        let blocker = Task { try await provider.response(ScheduledCall("held")) }
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        let order: [(String, RequestPriority)] = [
            ("low-1", .low), ("normal-1", .normal), ("high-1", .high), ("low-2", .low), ("high-2", .high), ("normal-2", .normal),
        ]
        var calls: [Task<Response, any Error>] = []
        for (index, (path, priority)) in order.enumerated() {
            calls.append(Task { try await provider.response(ScheduledCall(path, priority: priority)) })
            await waitUntilQueued(index + 1, in: provider)   // queued in this order
        }
        held.release()
        _ = try await blocker.value
        for call in calls { _ = try await call.value }
        let sent = server.requests.dropFirst().map { String($0.path.dropFirst("/v1/".count)) }
        #expect(sent == ["high-1", "high-2", "normal-1", "normal-2", "low-1", "low-2"])
    }

    @Test("a call's priority reaches its URLSessionTask: high and low set URLSessionTask's, normal leaves the default")
    func priorityReachesTheTask() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [PriorityRecordingProtocol.self]
        let test = UUID().uuidString
        configuration.httpAdditionalHeaders = [PriorityRecordingProtocol.testHeader: test]
        let provider = NetworkProvider(scheduling: Scheduling(maximumCallsPerHost: 1), configuration: configuration)
        for priority in RequestPriority.allCases {
            _ = try await provider.response(ScheduledCall("\(priority)", priority: priority))
        }
        #expect(
            PriorityRecordingProtocol.priorities(of: test) == [
                "/v1/low": URLSessionTask.lowPriority, "/v1/normal": URLSessionTask.defaultPriority, "/v1/high": URLSessionTask.highPriority,
            ])
    }

    @Test("a priority does not overtake calls already sent, and a free slot is taken at once whatever waits for other hosts")
    func freeSlotIsTakenAtOnce() async throws {
        let held = HeldAnswers()
        held.stub(server, "/v1/held")
        server.stub(.get, "/v1/now", .json(["ok": true]))
        let provider = makeScheduledProvider(server, Scheduling(maximumCalls: 3, maximumCallsPerHost: 1))
        let blocker = Task { try await provider.response(ScheduledCall("held", priority: .low)) }
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        let waiting = Task { try await provider.response(ScheduledCall("held", priority: .high)) }
        await waitUntilQueued(1, in: provider)
        let other = try await provider.response(ScheduledCall("now", host: "b.example.com", priority: .low))
        #expect(other.report.queueWait == 0)
        held.release()
        _ = try await (blocker.value, waiting.value)
    }

    @Test("the session opens at least maximumCallsPerHost connections to a host: no request sent waits inside URLSession")
    func sessionConnectionLimitCoversPerHostLimit() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 4   // iOS's own default for HTTP/1.1
        let provider = NetworkProvider(scheduling: Scheduling(), configuration: configuration)
        #expect(provider.urlSession.configuration.httpMaximumConnectionsPerHost == provider.scheduling.maximumCallsPerHost)
        #expect(configuration.httpMaximumConnectionsPerHost == 4)   // the caller's configuration stays as it is
        let roomy = URLSessionConfiguration.ephemeral
        roomy.httpMaximumConnectionsPerHost = 12
        #expect(NetworkProvider(scheduling: Scheduling(), configuration: roomy).urlSession.configuration.httpMaximumConnectionsPerHost == 12)
    }
}

/// Answers every request with 200 and notes the priority of the `URLSessionTask` that sent it, per test
/// (the ``testHeader`` names the test: tests run in parallel).
final class PriorityRecordingProtocol: URLProtocol {
    static let testHeader = "X-Priority-Test"
    fileprivate static let lock = NSLock()
    nonisolated(unsafe) fileprivate static var seen: [String: [String: Float]] = [:]

    /// The priorities seen for the test `test`, by path.
    static func priorities(of test: String) -> [String: Float] {
        lock.lock()
        defer { lock.unlock() }
        return seen[test] ?? [:]
    }

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let answer = Answer(protocol: self, test: request.value(forHTTPHeaderField: Self.testHeader), url: request.url ?? URL(fileURLWithPath: "/"))
        // Not from startLoading: it runs on the task's queue, which `URLSessionTask.priority` syncs onto in corelibs.
        DispatchQueue.global().async { answer.send() }
    }

    /// Notes the task's priority and answers 200, from another queue.
    private struct Answer: @unchecked Sendable {
        // @unchecked: the protocol and its task are used once, after startLoading returned, as URLSession expects.
        let `protocol`: URLProtocol
        let test: String?
        let url: URL

        func send() {
            if let test, let priority = `protocol`.task?.priority {
                PriorityRecordingProtocol.lock.lock()
                PriorityRecordingProtocol.seen[test, default: [:]][url.path] = priority
                PriorityRecordingProtocol.lock.unlock()
            }
            if let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:]) {
                `protocol`.client?.urlProtocol(`protocol`, didReceive: response, cacheStoragePolicy: .notAllowed)
            }
            `protocol`.client?.urlProtocol(`protocol`, didLoad: Data())
            `protocol`.client?.urlProtocolDidFinishLoading(`protocol`)
        }
    }

    override func stopLoading() {}
}
