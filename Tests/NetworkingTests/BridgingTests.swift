import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The rules the Combine publishers rely on (Combine itself is not on Linux): `StartedCall`.
@Suite("Bridging to callbacks")
struct BridgingTests {
    @Test func aStartedCallReportsItsResultExactlyOnce() async throws {
        // GIVEN a provider call
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(["id": 1]))
        let provider = server.makeProvider()
        let results = Recorder<Int>()
        let done = Signal()
        // WHEN it is started from callback code
        let call = StartedCall.start(
            { try await provider.response(TestEndpoint()).statusCode },
            completion: { result in
                if case .success(let status) = result { results.append(status) }
                done.fire()
            })
        await done.wait()
        call.cancel()   // after the result: changes nothing
        // THEN its result came once
        #expect(results.all == [200])
        #expect(server.requests.count == 1)
    }

    @Test func cancellingAStartedCallStopsItsRequestAndReportsNothing() async throws {
        // GIVEN a call whose answer takes long
        let server = MockServer()
        server.stub(.get, "/v1/users/1", MockResponse.json(["id": 1]).delayed(by: 30))
        let provider = server.makeProvider()
        let reported = Recorder<String>()
        let received = Signal()
        server.stub(.get, "/v1/started") { _ in
            received.fire()
            return .status(204)
        }
        // WHEN it is cancelled while the request is in flight
        let call = StartedCall.start(
            { () async throws -> Int in
                _ = try await provider.response(TestEndpoint(path: "/started"))
                return try await provider.response(TestEndpoint()).statusCode
            },
            completion: { result in reported.append("\(result)") })
        await received.wait()
        try await waitUntil { server.requests.count == 2 }
        call.cancel()
        // THEN the URL load was stopped, and the callback never ran
        #expect(await server.waitForInterruptions(1))
        #expect(server.interruptedCount == 1)
        #expect(reported.all.isEmpty)
    }

    /// Stands for a Combine subscription: the object a bridge's completion captures.
    final class Bridge: Sendable {
        let delivered = Recorder<Int>()
        func deliver(_ result: Result<Int, any Error>) {
            if case .success(let value) = result { delivered.append(value) }
        }
    }

    /// Whether the object `reference` points to has been released.
    final class WeakReference<Object: AnyObject>: @unchecked Sendable {
        // @unchecked: set once before it is shared; a weak load is thread-safe.
        weak var object: Object?
        init(_ object: Object) { self.object = object }
    }

    @Test func aCallNobodyHoldsStillDeliversThroughItsCompletionThenLetsItGo() async throws {
        // GIVEN a bridge that only the call's completion holds (as a subscription that nobody stores), and
        // a call that nobody holds either
        let answer = Signal()
        var bridge: Bridge? = Bridge()
        let delivered = try #require(bridge?.delivered)
        let released = WeakReference(try #require(bridge))
        _ = StartedCall.start(
            { () async throws -> Int in
                await answer.wait()
                return 42
            },
            completion: { [bridge] result in bridge?.deliver(result) })
        bridge = nil
        // WHEN the call's answer comes
        #expect(released.object != nil)   // kept alive by the running call
        answer.fire()
        // THEN the value is delivered, and then the bridge is released: no cycle outlives the call
        try await waitUntil { delivered.all == [42] }
        try await waitUntil { released.object == nil }
    }

    @Test func cancellingACallReleasesItsCompletionAtOnce() async throws {
        // GIVEN a running call whose completion holds a bridge, and whose operation has not returned yet
        // (it ignores cancellation until its answer comes)
        let answer = Signal()
        let started = Signal()
        var bridge: Bridge? = Bridge()
        let delivered = try #require(bridge?.delivered)
        let released = WeakReference(try #require(bridge))
        let call = StartedCall.start(
            { () async throws -> Int in
                started.fire()
                await answer.wait()
                return 42
            },
            completion: { [bridge] result in bridge?.deliver(result) })
        bridge = nil
        await started.wait()
        // WHEN the call is cancelled
        call.cancel()
        // THEN the bridge is released at once, before the operation returns, and nothing is delivered
        #expect(released.object == nil)
        answer.fire()
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(delivered.all.isEmpty)
    }

    @Test func fiveHundredCallsRacingTheirCancellationReportAtMostOnce() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(["id": 1]))
        let provider = server.makeProvider()
        let reports = Recorder<Int>()
        let calls = (0..<500).map { index in
            StartedCall.start({ try await provider.response(TestEndpoint()).statusCode }) { _ in reports.append(index) }
        }
        for (index, call) in calls.enumerated() where index.isMultiple(of: 2) { call.cancel() }
        // the uncancelled half all report; a cancelled one reports only if it had finished first
        try await waitUntil { Set(reports.all).isSuperset(of: Set(stride(from: 1, to: 500, by: 2))) }
        let all = reports.all
        #expect(all.count == Set(all).count)   // never twice
    }
}
