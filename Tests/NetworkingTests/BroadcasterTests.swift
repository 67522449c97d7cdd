import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// The broadcaster behind ``Outbox/outcomes`` and ``AuthInterceptor``'s account changes: every subscriber sees
/// the same values in the same order, nothing sent before ``Broadcaster/finish()`` is lost, and a subscriber
/// that falls behind learns how many it lost.
@Suite("Broadcaster", SuiteTimeLimit.oneMinute)
struct BroadcasterTests {
    @Test("two subscribers see the values of 8 senders on threads of their own in one and the same order, each sender's in its own order")
    func oneOrderForEverySubscriber() async {
        let broadcaster = Broadcaster<Int>(backlogLimit: 0)
        let first = broadcaster.subscribe()
        let second = broadcaster.subscribe()
        let senders = 8
        let each = 2_000
        // Threads, not tasks: a cooperative pool of one thread would run each sender's sends without a break.
        DispatchQueue.concurrentPerform(iterations: senders) { sender in
            for index in 0..<each { broadcaster.send(sender * each + index) }
        }
        broadcaster.finish()   // after every send returned: each value is in both streams
        let seen = [await Self.values(of: first), await Self.values(of: second)]
        #expect(seen[0].count == senders * each)
        #expect(seen[0] == seen[1])
        for sender in 0..<senders {
            let own = seen[0].filter { $0 / each == sender }
            #expect(own == Array(sender * each..<(sender + 1) * each))
        }
    }

    @Test("a subscriber that falls behind keeps the newest values and is told how many it lost")
    func fallingBehindIsCounted() async {
        let broadcaster = Broadcaster<Int>(backlogLimit: 0, bufferLimit: 10)
        let (id, stream) = broadcaster.subscribeCounting()
        for value in 0..<1_000 { broadcaster.send(value) }
        #expect(broadcaster.takeDropped(of: id) == 990)
        #expect(broadcaster.takeDropped(of: id) == 0)   // told once
        broadcaster.finish()
        #expect(await Self.values(of: stream) == Array(990..<1_000))
    }

    @Test("values kept while nobody listened that overflow the first listener's buffer are counted as lost")
    func backlogBeyondTheBufferIsCounted() async {
        let broadcaster = Broadcaster<Int>(backlogLimit: 100, bufferLimit: 10)
        for value in 0..<50 { broadcaster.send(value) }   // nobody listens: kept
        let (id, stream) = broadcaster.subscribeCounting()
        #expect(broadcaster.takeDropped(of: id) == 40)
        broadcaster.finish()
        #expect(await Self.values(of: stream) == Array(40..<50))
    }

    @Test("a listener that fell behind is told how many it lost even when the broadcaster finished before it read them")
    func droppedBeforeTheEndAreStillCounted() async {
        let broadcaster = Broadcaster<Int>(backlogLimit: 0, bufferLimit: 10)
        let (id, stream) = broadcaster.subscribeCounting()
        for value in 0..<100 { broadcaster.send(value) }
        broadcaster.finish()   // the outbox closed: what is buffered is still read, the count first
        #expect(broadcaster.takeDropped(of: id) == 90)
        #expect(await Self.values(of: stream) == Array(90..<100))
    }

    @Test("a listener that stops listening is forgotten: with nobody left, what is sent is kept for the next one")
    func aCancelledListenerIsForgotten() async {
        let broadcaster = Broadcaster<Int>(backlogLimit: 100)
        let listener = Task { [stream = broadcaster.subscribe()] in for await _ in stream {} }
        listener.cancel()
        await listener.value
        for value in 0..<5 { broadcaster.send(value) }   // kept only when the cancelled listener was removed
        let next = broadcaster.subscribe()
        broadcaster.finish()
        #expect(await Self.values(of: next) == Array(0..<5))
    }

    /// Every value `stream` gives until it ends.
    static func values(of stream: AsyncStream<Int>) async -> [Int] {
        var values: [Int] = []
        for await value in stream { values.append(value) }
        return values
    }
}
