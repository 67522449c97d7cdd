import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 33, part 2: a queued call can be cancelled at once, its deadline counts while it waits, its idle
/// timeout does not; the wait is in its report and told to the monitors.
@Suite("Scheduling: the queue — cancellation, deadline, idle timeout, report and events", SuiteTimeLimit.threeMinutes)
struct SchedulingQueueTests {
    let server = MockServer()
    let held = HeldAnswers()

    init() {
        held.stub(server, "/v1/held")
        server.stub(.get, "/v1/items", .json(["ok": true]))
    }

    /// A provider with one slot per host, and a call holding it until `held` is released.
    func busyProvider(coalescing: Bool = false, monitors: [any EventMonitor] = []) async throws -> (NetworkProvider, Task<Response, any Error>) {
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1), coalescing: coalescing, monitors: monitors)
        let blocker = Task { try await provider.response(ScheduledCall("held")) }
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        return (provider, blocker)
    }

    @Test("a queued call that is cancelled ends at once with NetworkError.cancelled, leaves the queue and is never sent")
    func cancelQueued() async throws {
        let events = QueueEvents()
        let (provider, blocker) = try await busyProvider(monitors: [events])
        let queued = Task { try await provider.response(ScheduledCall()) }
        await waitUntilQueued(1, in: provider)
        queued.cancel()
        // Ends while the slot is still taken: it waited for nothing but its cancellation.
        await #expect(throws: NetworkError.cancelled) { try await queued.value }
        #expect(provider.slots.waitingCount == 0)
        held.release()
        _ = try await blocker.value
        _ = try await provider.response(ScheduledCall("held"))   // the slot went on to the next call
        #expect(server.requests(.get, "/v1/items").isEmpty)
        await provider.waitForMonitors()
        #expect(events.events.all.filter { $0.hasPrefix("end") } == ["end: \(NetworkError.cancelled)"])
    }

    @Test("a call cancelled before it reaches the queue never takes a slot")
    func cancelledBeforeQueueing() async throws {
        let (provider, blocker) = try await busyProvider()
        let queued = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await provider.response(ScheduledCall())
        }
        await #expect(throws: NetworkError.cancelled) { try await queued.value }
        #expect(provider.slots.waitingCount == 0 && provider.slots.inFlightCount == 1)
        held.release()
        _ = try await blocker.value
        #expect(server.requests(.get, "/v1/items").isEmpty)
    }

    @Test("a waiter that leaves on its way to the queue (cancelled between the look for a free slot and the enqueue) is never queued")
    func leftWhileArriving() async throws {
        let slots = CallSlots(Scheduling(maximumCallsPerHost: 1))
        let origin = Origin(URL(string: "https://api.example.com/")!)
        let held = try #require(slots.take(origin))
        let waiter = SlotWaiter(priority: .normal, slots: slots, deadlineSeconds: 60)
        slots.abandon(waiter, because: .cancelled)   // the cancellation handler ran first: the waiter is still arriving
        var queued = true
        await #expect(throws: NetworkError.cancelled) {
            _ = try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<HostLine, any Error>) in
                queued = slots.enqueue(waiter, for: origin, continuation: continuation)
            }
        }
        #expect(!queued)
        #expect(slots.waitingCount == 0 && slots.inFlightCount == 1)
        slots.release(held)   // nobody waits for it
        #expect(slots.waitingCount == 0 && slots.inFlightCount == 0)
        #expect(slots.take(origin) != nil)
    }

    @Test("hundreds of queued calls cancelled: each ends, none is sent, the queue is empty and the next call goes")
    func cancelMany() async throws {
        let (provider, blocker) = try await busyProvider()
        let queued = (0..<500).map { _ in Task { try await provider.response(ScheduledCall()) } }
        await waitUntilQueued(500, in: provider)
        for call in queued { call.cancel() }
        for call in queued { await #expect(throws: NetworkError.cancelled) { try await call.value } }
        #expect(provider.slots.waitingCount == 0)
        held.release()
        _ = try await blocker.value
        #expect(try await provider.response(ScheduledCall()).statusCode == 200)
        #expect(server.requests(.get, "/v1/items").count == 1)
    }

    /// With coalescing on, the call is a shared exchange's only caller: the exchange, cancelled as it leaves
    /// at its deadline, still says the deadline ended its wait.
    @Test("the deadline counts in the queue: it passes there and the call ends with deadlineExceeded, never sent", arguments: [false, true])
    func deadlineInQueue(coalescing: Bool) async throws {
        let events = QueueEvents()
        let (provider, blocker) = try await busyProvider(coalescing: coalescing, monitors: [events])
        var call = ScheduledCall()
        call.deadline = 0.3
        await #expect(throws: NetworkError.deadlineExceeded(seconds: 0.3)) { try await provider.response(call) }
        #expect(provider.slots.waitingCount == 0)
        held.release()
        _ = try await blocker.value
        #expect(server.requests(.get, "/v1/items").isEmpty)
        await provider.waitForMonitors()
        #expect(events.events.all.suffix(2) == ["start https://api.example.com:443", "end: \(NetworkError.deadlineExceeded(seconds: 0.3))"])
    }

    @Test("the idle timeout starts when the request is sent: a call queued longer than its timeout succeeds once sent")
    func idleTimeoutStartsWhenSent() async throws {
        let (provider, blocker) = try await busyProvider()
        var call = ScheduledCall()
        call.timeout = 1   // the request's idle timeout (URLRequest.timeoutInterval), which the test kit enforces
        let queued = Task { try await provider.response(call) }
        await waitUntilQueued(1, in: provider)
        try await Task.sleep(nanoseconds: 1_600_000_000)   // a lower bound: longer than the timeout, in the queue
        held.release()
        _ = try await blocker.value
        let response = try await queued.value
        #expect(response.statusCode == 200)
        #expect(response.report.queueWait >= 1.5)
    }

    @Test("the idle timeout still ends a request that gets no byte once it is sent")
    func idleTimeoutStillApplies() async throws {
        server.stub(.get, "/v1/silent", MockResponse.json(["ok": true]).delayed(by: 30))
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1))
        var call = ScheduledCall("silent")
        call.timeout = 1
        await #expect(throws: NetworkError.transportFailed(URLError(.timedOut))) { try await provider.response(call) }
        #expect(provider.slots.inFlightCount == 0)
    }

    @Test("the wait is in the report and told to the monitors before the task starts; a call that never waited reports 0")
    func reportAndEvents() async throws {
        let events = QueueEvents()
        let (provider, blocker) = try await busyProvider(monitors: [events])
        let queued = Task { try await provider.response(ScheduledCall()) }
        await waitUntilQueued(1, in: provider)
        held.release()
        #expect(try await blocker.value.report.queueWait == 0)
        let response = try await queued.value
        #expect(response.report.queueWait > 0)
        #expect(response.report.queueWait <= response.report.duration)
        await provider.waitForMonitors()
        #expect(events.events.all == ["task", "start https://api.example.com:443", "end", "task"])
    }

    @Test("NetworkLogger writes one line for a queued call's wait (its start too when verbose)")
    func loggerLines() async throws {
        let lines = Recorder<String>()
        let logger = NetworkLogger(sink: LogSink { lines.append($0) })
        let (provider, blocker) = try await busyProvider(monitors: [logger])
        let queued = Task { try await provider.response(ScheduledCall()) }
        await waitUntilQueued(1, in: provider)
        held.release()
        _ = try await (blocker.value, queued.value)
        await provider.waitForMonitors()
        #expect(lines.all.filter { $0.contains("queue") }.count == 1)
        #expect(lines.all.contains { $0.hasPrefix("▶ sent after ") && $0.hasSuffix(" ms in the queue") })
    }
}
