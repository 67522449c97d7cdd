import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A call that nothing but the network can answer takes its first slot before its pipeline starts (see
/// `CallStart`): a call of its own waits in its own small frame, a group of identical GETs waits with no
/// task at all. The rules of the queue are the same on these paths; these tests run them on both (with
/// coalescing on, every distinct GET is a group of one; off, a call of its own).
@Suite("Scheduling: the first slot taken before the pipeline — groups and lone calls", SuiteTimeLimit.threeMinutes)
struct SchedulingSlotFirstTests {
    let server = MockServer()
    let held = HeldAnswers()

    init() {
        held.stub(server, "/v1/held")
        server.stub(.get, "/v1/items", .json(["ok": true]))
    }

    /// A provider with `limit` slots per host and a call holding one of them until `held` is released.
    func busyProvider(
        limit: Int = 1, coalesces: Bool = true, connectivity: any Connectivity = AlwaysOnline(), offlineBehavior: OfflineBehavior = .wait
    ) async throws -> (NetworkProvider, Task<Response, any Error>) {
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCallsPerHost: limit, coalescesIdenticalCalls: coalesces), connectivity: connectivity,
            offlineBehavior: offlineBehavior, configuration: server.makeConfiguration(basedOn: .ephemeral))
        let blocker = Task { try await provider.response(ScheduledCall("held")) }
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        return (provider, blocker)
    }

    @Test("a queued group of identical GETs whose callers all cancel leaves the queue at once, is never sent, and the slot goes on")
    func cancelledGroupLeavesTheQueue() async throws {
        let (provider, blocker) = try await busyProvider()
        let callers = (0..<50).map { _ in Task { try await provider.response(ScheduledCall()) } }
        await waitUntilQueued(1, in: provider)   // one group: one waiter, whatever the number of callers
        for caller in callers { caller.cancel() }
        for caller in callers { await #expect(throws: NetworkError.cancelled) { try await caller.value } }
        // Out of the queue when the last caller left, not when a task got round to it.
        #expect(provider.slots.waitingCount == 0)
        held.release()
        _ = try await blocker.value
        #expect(try await provider.response(ScheduledCall()).statusCode == 200)   // a new group: sent at once
        #expect(server.requests(.get, "/v1/items").count == 1)
        await pollUntil { provider.slots.inFlightCount == 0 }
    }

    @Test("a slot taken before the pipeline and not used (offline before sending) is given back: the next call takes it", arguments: [true, false])
    func unusedFirstSlotIsGivenBack(coalesces: Bool) async throws {
        let connectivity = ManualConnectivity(isOnline: true)
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCallsPerHost: 1, coalescesIdenticalCalls: coalesces), connectivity: connectivity,
            offlineBehavior: .fail, configuration: server.makeConfiguration(basedOn: .ephemeral))
        connectivity.set(online: false)
        // The slot is free: taken at once, before the pipeline, which then finds the device offline.
        await #expect(throws: NetworkError.offline) { try await provider.response(ScheduledCall()) }
        #expect(provider.slots.inFlightCount == 0 && provider.slots.waitingCount == 0)
        connectivity.set(online: true)
        #expect(try await provider.response(ScheduledCall()).statusCode == 200)
        #expect(server.requests(.get, "/v1/items").count == 1)
        await pollUntil { provider.slots.inFlightCount == 0 }
    }

    @Test("a lone call (coalescing off) waits in the queue the same way: it cancels at once, its deadline counts there", arguments: [true, false])
    func loneCallInTheQueue(coalesces: Bool) async throws {
        let events = QueueEvents()
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCallsPerHost: 1, coalescesIdenticalCalls: coalesces),
            configuration: server.makeConfiguration(basedOn: .ephemeral), monitors: [events])
        let blocker = Task { try await provider.response(ScheduledCall("held")) }
        _ = try await server.nextRequest(matching: .get, "/v1/held")
        let queued = Task { try await provider.response(ScheduledCall()) }
        await waitUntilQueued(1, in: provider)
        queued.cancel()
        await #expect(throws: NetworkError.cancelled) { try await queued.value }
        #expect(provider.slots.waitingCount == 0)
        var late = ScheduledCall()
        late.deadline = 0.3
        await #expect(throws: NetworkError.deadlineExceeded(seconds: 0.3)) { try await provider.response(late) }
        #expect(provider.slots.waitingCount == 0)
        held.release()
        _ = try await blocker.value
        #expect(server.requests(.get, "/v1/items").isEmpty)
        await provider.waitForMonitors()
        #expect(
            events.events.all == [
                "task", "start https://api.example.com:443", "end: \(NetworkError.cancelled)", "start https://api.example.com:443",
                "end: \(NetworkError.deadlineExceeded(seconds: 0.3))",
            ])
        await pollUntil { provider.slots.inFlightCount == 0 }
    }

    @Test(
        "1,000 queued calls, mixed priorities, a fifth cancelled: the others are sent high first, FIFO within, never the cancelled",
        arguments: [true, false])
    func thousandQueuedWithPrioritiesAndCancellations(coalesces: Bool) async throws {
        let order = Recorder<String>()
        server.stub(handler: { request in
            order.append(request.url.path)
            return .json(["ok": true])
        })
        let (provider, blocker) = try await busyProvider(coalesces: coalesces)
        let priorities: [RequestPriority] = [.low, .normal, .high]
        var calls: [Task<Response, any Error>] = []
        for index in 0..<1_000 {
            let call = ScheduledCall("items/\(index)", priority: priorities[index % 3])
            calls.append(Task { try await provider.response(call) })
            await waitUntilQueued(index + 1, in: provider)   // queued in index order: the arrival order
        }
        let cancelled = Set(stride(from: 0, to: 1_000, by: 5))
        for index in cancelled { calls[index].cancel() }
        for index in cancelled { await #expect(throws: NetworkError.cancelled) { try await calls[index].value } }
        #expect(provider.slots.waitingCount == 1_000 - cancelled.count)
        held.release()
        _ = try await blocker.value
        for (index, call) in calls.enumerated() where !cancelled.contains(index) { #expect(try await call.value.statusCode == 200) }
        let expected = [2, 1, 0].flatMap { priority in
            (0..<1_000).filter { $0 % 3 == priority && !cancelled.contains($0) }.map { "/v1/items/\($0)" }
        }
        #expect(order.all == expected)
        await pollUntil { provider.slots.inFlightCount == 0 }
        #expect(provider.slots.waitingCount == 0)
    }

    @Test("1,000 concurrent distinct calls under 3 per host: never more than 3 at the server, every one answered", arguments: [true, false])
    func limitHoldsAtTheServer(coalesces: Bool) async throws {
        let meter = ConcurrencyMeter()
        server.stub(handler: { request in
            meter.enter(request.url.host ?? "")
            defer { meter.leave(request.url.host ?? "") }
            try await Task.sleep(nanoseconds: 1_000_000)
            return .json(["ok": true])
        })
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCallsPerHost: 3, coalescesIdenticalCalls: coalesces),
            configuration: server.makeConfiguration(basedOn: .ephemeral))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<1_000 { group.addTask { try await provider.response(ScheduledCall("items/\(index)")).statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 1_000 && statuses.allSatisfy { $0 == 200 })
        #expect(meter.peak("api.example.com") <= 3)
        #expect(server.requests.count == 1_000)
        await pollUntil { provider.slots.inFlightCount == 0 }
        #expect(provider.slots.waitingCount == 0)
    }
}
