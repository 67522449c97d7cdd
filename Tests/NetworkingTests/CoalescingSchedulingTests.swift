import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where coalescing (issue 33, part 1) meets the limits, the queue, the wait for the network and the
/// deadlines: a shared exchange is one call to all of them.
@Suite("Coalescing with limits, offline waits and deadlines")
struct CoalescingSchedulingTests {
    @Test func aGroupTakesOneSlotOfItsHost() async throws {
        // GIVEN a host limit of 2, and 20 identical calls whose answer is held
        let server = MockServer()
        let held = HeldAnswers()
        held.stub(server, "/v1/items")
        server.stub(.get, "/v1/other", .json(["ok": true]))
        let joins = JoinCounter()
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 2), coalescing: true, monitors: [joins])
        let calls = (0..<20).map { _ in Task { try await provider.response(ScheduledCall()) } }
        await joins.waitForJoins(19)
        // WHEN another call to the same host is made, THEN it is sent and answered while the group still waits
        #expect(try await provider.response(ScheduledCall("other")).statusCode == 200)
        held.release()
        for call in calls { #expect(try await call.value.statusCode == 200) }
        #expect(server.requests.filter { $0.url.path == "/v1/items" }.count == 1)
    }

    @Test func aQueuedGroupWhoseCallersAllCancelLeavesTheQueue() async throws {
        // GIVEN a host limit of 1 held by a call, and a group of 5 identical calls queued behind it
        let server = MockServer()
        let held = HeldAnswers()
        held.stub(server, "/v1/block")
        server.stub(.get, "/v1/items", .json(["ok": true]))
        let joins = JoinCounter()
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1), coalescing: true, monitors: [joins])
        let blocker = Task { try await provider.response(ScheduledCall("block")) }
        _ = try await server.nextRequest()
        let calls = (0..<5).map { _ in Task { try await provider.response(ScheduledCall()) } }
        await joins.waitForJoins(4)
        await waitUntilQueued(1, in: provider)   // one place in the queue for the group
        // WHEN every caller of the group is cancelled
        for call in calls { call.cancel() }
        // THEN each ends with the cancellation error, the group leaves the queue, and it is never sent
        for call in calls { await #expect(throws: NetworkError.cancelled) { try await call.value } }
        await waitUntilQueued(0, in: provider)
        held.release()
        _ = try await blocker.value
        #expect(server.requests.allSatisfy { $0.url.path != "/v1/items" })
    }

    @Test func aJoinedCallsQueueWaitIsPartOfItsOwnDuration() async throws {
        // GIVEN a host limit of 1 held by a call, and a call queued behind it for a while
        let server = MockServer()
        let held = HeldAnswers()
        held.stub(server, "/v1/block")
        server.stub(.get, "/v1/items", .json(["ok": true]))
        let joins = JoinCounter()
        let provider = makeScheduledProvider(server, Scheduling(maximumCallsPerHost: 1), coalescing: true, monitors: [joins])
        let blocker = Task { try await provider.response(ScheduledCall("block")) }
        _ = try await server.nextRequest()
        let first = Task { try await provider.response(ScheduledCall()) }
        await waitUntilQueued(1, in: provider)
        try await Task.sleep(nanoseconds: 300_000_000)   // the first call waits in the queue before the other joins
        // WHEN an identical call joins it, and the slot frees
        let joined = Task { try await provider.response(ScheduledCall()) }
        await joins.waitForJoins(1)
        held.release()
        _ = try await blocker.value
        _ = try await first.value
        let report = try await joined.value.report
        // THEN the joined call's report never says it waited longer than it lasted (queueWait and
        // connectivityWait are parts of duration)
        #expect(report.joinedExistingCall)
        #expect(report.queueWait <= report.duration)
        #expect(report.connectivityWait <= report.duration)
    }

    @Test func aGroupSendsOnceAfterTheNetworkIsBackAndACallerCancelledMeanwhileEndsAtOnce() async throws {
        // GIVEN the device offline, and 5 identical calls that wait for the network
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"id":1}"#))
        let connectivity = ManualConnectivity(isOnline: false)
        let joins = JoinCounter()
        let provider = server.makeProvider(connectivity: connectivity, monitors: [joins])
        let calls = (0..<5).map { _ in Task { try await provider.response(CoalescedEndpoint()) } }
        await joins.waitForJoins(4)
        await pollUntil { connectivity.waitingCount == 5 }   // each caller's pipeline waits (only the exchange is shared)
        // WHEN the caller that started the exchange and another are cancelled during the wait
        calls[0].cancel()
        calls[3].cancel()
        await #expect(throws: NetworkError.cancelled) { try await calls[0].value }
        await #expect(throws: NetworkError.cancelled) { try await calls[3].value }
        // THEN the others get the answer of the one exchange once the network is back
        connectivity.set(online: true)
        for index in [1, 2, 4] { #expect(try await calls[index].value.statusCode == 200) }
        #expect(server.requests.count == 1)
    }

    @Test func theExchangeGoesOnWhenItsStarterLeavesBeforeAJoinedCallerAttached() async throws {
        // GIVEN a caller whose exchange is held at the server, and an identical caller that joined the group but
        // has not reached the exchange yet (it waits for the network)
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let connectivity = ManualConnectivity(isOnline: true)
        let joins = JoinCounter()
        let provider = server.makeProvider(connectivity: connectivity, monitors: [joins])
        let first = Task { try await provider.response(CoalescedEndpoint()) }
        _ = try await server.nextRequest()
        connectivity.set(online: false)
        let joined = Task { try await provider.response(CoalescedEndpoint()) }
        await joins.waitForJoins(1)
        await pollUntil { connectivity.waitingCount == 1 }
        // WHEN the first caller is cancelled (as when its deadline passes), THEN it ends at once
        first.cancel()
        await #expect(throws: NetworkError.cancelled) { try await first.value }
        // and the exchange is not cancelled while a caller of its group remains (issue 33): back online, the
        // joined caller gets its answer, with no second request
        connectivity.set(online: true)
        gate.fire()
        #expect(try await joined.value.statusCode == 200)
        #expect(server.requests.count == 1)
        #expect(server.interruptedCount == 0)
    }

    @Test func whenEveryCallersDeadlinePassesTheSharedWaitEnds() async throws {
        // GIVEN the device offline, and 3 identical calls with a short deadline waiting for the network
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"id":1}"#))
        let connectivity = ManualConnectivity(isOnline: false)
        let provider = server.makeProvider(connectivity: connectivity)
        let calls = (0..<3).map { _ in Task { try await provider.response(CoalescedEndpoint(deadline: 0.5)) } }
        // WHEN their deadlines pass, THEN each ends with its own deadline error
        for call in calls {
            await #expect {
                try await call.value
            } throws: { error in
                guard case NetworkError.deadlineExceeded(0.5) = error else { return false }
                return true
            }
        }
        // and the exchange, left by its last caller, stops waiting and never sends
        await pollUntil { connectivity.waitingCount == 0 }
        #expect(connectivity.waitingCount == 0)
        connectivity.set(online: true)
        #expect(server.requests.isEmpty)
    }

    @Test func aCallMadeAsTheLastCallerLeavesNeverJoinsTheCancelledExchange() async throws {
        // GIVEN a server that holds every answer
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let provider = server.makeProvider()
        // WHEN, 200 times, a call is cancelled just as an identical one is made
        var followers: [Task<Response, any Error>] = []
        for index in 0..<200 {
            let endpoint = CoalescedEndpoint(path: "/users/\(index)")
            let leaving = Task { try await provider.response(endpoint) }
            await Task.yield()
            leaving.cancel()
            followers.append(Task { try await provider.response(endpoint) })
        }
        gate.fire()
        // THEN no follower ends with a cancellation it did not ask for: each gets its answer
        for follower in followers { #expect(try await follower.value.statusCode == 200) }
    }
}
