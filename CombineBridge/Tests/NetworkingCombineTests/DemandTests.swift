import Foundation
import Testing

@testable import NetworkingCombine

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

/// The rule every stream publisher of the bridge relies on: an async sequence is read as the subscriber
/// asks, one value ahead at most, never into a backlog.
@Suite("Combine: demand", SuiteTimeLimit.oneMinute)
struct DemandTests {
    @Test func aSubscriberAskingOneAtATimeGetsNoMoreThanItAskedAndTheSequenceIsReadOneAheadAtMost() async throws {
        // GIVEN a publisher of a 1,000-value sequence, and a subscriber that asks for nothing yet
        let sequence = CountingSequence(count: 1_000)
        let probe = Probe<Int>(initialDemand: .none)
        DemandPublisher<Int, any Error> { try await $0.send(contentsOf: sequence) }.subscribe(probe)
        // WHEN it asks for one value at a time, three times
        for asked in 1...3 {
            probe.request(1)
            // THEN it has exactly the values it asked for, and the sequence was read at most one further
            #expect(await probe.values(count: asked) == Array(0..<asked))
            #expect(probe.values.count == asked)
            #expect(sequence.readCount <= asked + 1)
        }
        // and nothing ended: 997 values were never asked for, nor read
        #expect(probe.completed == nil)
        #expect(sequence.readCount <= 4)
        probe.cancel()
    }

    @Test func aSubscriberAskingForAllGetsEveryValueThenTheEnd() async throws {
        let sequence = CountingSequence(count: 100)
        let probe = Probe<Int>()
        DemandPublisher<Int, any Error> { try await $0.send(contentsOf: sequence) }.subscribe(probe)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values == Array(0..<100))
    }

    @Test func theEndReachesASubscriberThatAskedForExactlyTheValuesThereWere() async throws {
        // GIVEN a sequence of 2 values and a subscriber that asks for exactly 2
        let probe = Probe<Int>(initialDemand: .max(2))
        DemandPublisher<Int, any Error> { try await $0.send(contentsOf: CountingSequence(count: 2)) }.subscribe(probe)
        // THEN the end comes without more demand (Combine sends completions without demand)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values == [0, 1])
    }

    @Test func theBodyDoesNotRunBeforeTheFirstDemand() async throws {
        // GIVEN a subscriber that asks for nothing
        let runs = CountingSequence(count: 1)
        let probe = Probe<Int>(initialDemand: .none)
        DemandPublisher<Int, any Error> { try await $0.send(contentsOf: runs) }.subscribe(probe)
        // WHEN another subscriber of the same kind asks and completes (so a started body would have had time)
        let other = Probe<Int>()
        DemandPublisher<Int, any Error> { try await $0.send(contentsOf: CountingSequence(count: 1)) }.subscribe(other)
        _ = await other.completion()
        // THEN the first body never read its sequence, before its subscriber cancels: a body starts only
        // with demand
        #expect(runs.readCount == 0)
        #expect(probe.values.isEmpty && probe.completed == nil)
        probe.cancel()
    }

    @Test func demandAskedTwiceBeforeTheFirstValueAddsUp() async throws {
        // GIVEN a subscriber that asks for one value, then one more, before any came
        let probe = Probe<Int>(initialDemand: .none)
        DemandPublisher<Int, any Error> { try await $0.send(contentsOf: CountingSequence(count: 10)) }.subscribe(probe)
        probe.request(1)
        probe.request(1)
        // THEN it gets two values
        #expect(await probe.values(count: 2) == [0, 1])
        probe.cancel()
    }

    @Test func demandReturnedFromReceiveIsCounted() async throws {
        // GIVEN a subscriber that asks for one value, and for one more with each value it receives
        let probe = Probe<Int>(initialDemand: .max(1), demandFromReceive: .max(1))
        DemandPublisher<Int, any Error> { try await $0.send(contentsOf: CountingSequence(count: 5)) }.subscribe(probe)
        // THEN it gets every value, then the end
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(probe.values == Array(0..<5))
    }

    @Test func cancellingFromInsideReceiveEndsTheBodyAndSendsNothingMore() async throws {
        // GIVEN a subscriber that asks for everything and cancels from inside `receive(_:)` at its second value
        let ended = Flag()
        let sequence = CountingSequence(count: 1_000)
        let probe = Probe<Int>(cancelsAfter: 2)
        DemandPublisher<Int, any Error> { subscription in
            defer { ended.set() }
            try await subscription.send(contentsOf: sequence)
        }
        .subscribe(probe)
        // THEN the body ends (no deadlock, no wait for demand), and nothing more was sent or read
        await ended.wait()
        #expect(probe.values == [0, 1] && probe.completed == nil)
        #expect(sequence.readCount <= 3)
    }

    @Test(arguments: [false, true])
    func theSubscriberIsReleasedOnceTheSubscriptionEnded(byCancelling: Bool) async throws {
        // GIVEN a subscriber that keeps its subscription (and so the subscription's hold on it would be a cycle)
        weak var released: Probe<Int>?
        do {
            let probe = Probe<Int>(initialDemand: byCancelling ? .max(1) : .unlimited)
            released = probe
            DemandPublisher<Int, any Error> { try await $0.send(contentsOf: CountingSequence(count: 3)) }.subscribe(probe)
            // WHEN the subscription ends: the publisher finished, or the subscriber cancelled
            if byCancelling {
                _ = await probe.values(count: 1)
                probe.cancel()
            } else {
                _ = await probe.completion()
            }
        }
        // THEN nothing holds the subscriber any more (waits until the body's task let go; a leak fails by
        // the suite's time limit)
        while released != nil {
            try await Task.sleep(nanoseconds: 1_000_000)
        }
    }

    @Test func cancellingWhileTheBodyWaitsForDemandEndsTheBodyAndSendsNothing() async throws {
        // GIVEN a body waiting for demand after its first value
        let ended = Flag()
        let probe = Probe<Int>(initialDemand: .max(1))
        DemandPublisher<Int, any Error> { subscription in
            defer { ended.set() }
            try await subscription.send(contentsOf: CountingSequence(count: 10))
        }
        .subscribe(probe)
        #expect(await probe.values(count: 1) == [0])
        // WHEN the subscription is cancelled
        probe.cancel()
        // THEN the body ends (it was not left waiting forever), and the subscriber heard nothing more
        await ended.wait()
        #expect(probe.values == [0] && probe.completed == nil)
    }
}
