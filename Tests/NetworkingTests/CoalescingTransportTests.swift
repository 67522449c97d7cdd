import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Coalescing shares the `URLSessionTask`, not a pipeline (issue 33): each caller runs its own pipeline in
/// its own task, and the group's exchanges are counted at the mock.
@Suite("Coalescing: one shared transfer per request, each caller's own pipeline")
struct CoalescingTransportTests {
    @Test func theStarterCancelledWhileOthersWaitLeavesTheExchangeToThem() async throws {
        // GIVEN a held answer, a caller that started the exchange, and 50 that joined it
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let joins = JoinCounter()
        let provider = server.makeProvider(monitors: [joins])
        let starter = Task { try await provider.response(CoalescedEndpoint()) }
        _ = try await server.nextRequest()
        let joiners = (0..<50).map { _ in Task { try await provider.response(CoalescedEndpoint()) } }
        await joins.waitForJoins(50)
        // WHEN the starter is cancelled
        starter.cancel()
        // THEN it ends at once, and the exchange goes on for the others: one request, never interrupted
        await #expect(throws: NetworkError.cancelled) { try await starter.value }
        gate.fire()
        for joiner in joiners {
            let response = try await joiner.value
            #expect(response.statusCode == 200 && response.report.joinedExistingCall)
        }
        #expect(server.requests.count == 1)
        #expect(server.interruptedCount == 0)
    }

    @Test func theLastCallerToLeaveCancelsTheSessionTask() async throws {
        // GIVEN an answer that never comes, and 5 identical callers waiting for it
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.status(200).delayed(by: .infinity))
        let joins = JoinCounter()
        let provider = server.makeProvider(monitors: [joins])
        let calls = (0..<5).map { _ in Task { try await provider.response(CoalescedEndpoint()) } }
        await joins.waitForJoins(4)
        // WHEN all but one leave, THEN the exchange goes on
        for call in calls.dropLast() { call.cancel() }
        for call in calls.dropLast() { await #expect(throws: NetworkError.cancelled) { try await call.value } }
        #expect(server.interruptedCount == 0)
        // and when the last leaves, its URLSessionTask is cancelled (stopped at the server) and its slot given back
        calls.last?.cancel()
        await #expect(throws: NetworkError.cancelled) { try await calls.last?.value }
        #expect(await server.waitForInterruptions(1))
        #expect(server.requests.count == 1)
        await pollUntil { provider.slots.inFlightCount == 0 }
    }

    @Test func eachCallerOfAGroupEndsAtItsOwnDeadline() async throws {
        // GIVEN a held answer and three identical calls: one with no deadline, which started the exchange, and
        // two that joined it with deadlines of 0.3 s and 0.6 s
        let gate = Signal()
        let server = gatedServer(gate: gate)
        let joins = JoinCounter()
        let provider = server.makeProvider(monitors: [joins])
        let unbounded = Task { try await provider.response(CoalescedEndpoint(deadline: .infinity)) }
        _ = try await server.nextRequest()
        let short = Task { try await provider.response(CoalescedEndpoint(deadline: 0.3)) }
        let longer = Task { try await provider.response(CoalescedEndpoint(deadline: 0.6)) }
        await joins.waitForJoins(2)
        // WHEN the deadlines pass, THEN each of the first two ends with its own error, the gate still closed
        for (call, seconds) in [(short, 0.3), (longer, 0.6)] {
            await #expect {
                try await call.value
            } throws: { error in
                guard case NetworkError.deadlineExceeded(let given) = error else { return false }
                return given == seconds
            }
        }
        // and the third gets the answer of the one exchange, neither cut nor sent again
        gate.fire()
        #expect(try await unbounded.value.statusCode == 200)
        #expect(server.requests.count == 1)
        #expect(server.interruptedCount == 0)
    }

    @Test func callersThatCameDuringTheRefreshShareTheOneResend() async throws {
        // GIVEN an expired access token and a refresh held by a gate
        let api = MockAuthServer()
        let gate = Signal()
        api.onRefresh { await gate.wait() }
        let joins = JoinCounter()
        let (provider, _) = api.makeAuthenticatedProvider(
            credential: Credential(accessToken: "access-0", refreshToken: "refresh-0", account: "kim"), monitors: [joins])
        // WHEN 200 identical GETs are made, the first 401 arrives, and 200 more are made while the refresh runs
        var calls = (0..<200).map { _ in Task { try await provider.response(api.resource("/me")) } }
        await pollUntil { api.expiredResponseCount == 1 }
        calls += (0..<200).map { _ in Task { try await provider.response(api.resource("/me")) } }
        await joins.waitForJoins(399)
        gate.fire()
        // THEN every caller gets its answer, and the group met the 401 once: one refresh, one resend (RFC 9110
        // §15.5.2: the request is repeated with new credentials, once for all of them)
        for call in calls { #expect(try await call.value.statusCode == 200) }
        #expect(api.refreshCount == 1)
        #expect(api.expiredResponseCount == 1)
        #expect(api.mock.requests(.get, "/v1/me").count == 2)
    }
}
