import Foundation

/// The outcomes of an ``Outbox``'s mutations as they happen, as an `AsyncSequence` that never throws.
///
/// Every iteration (`for await outcome in outbox.outcomes`) receives every outcome from the moment its
/// iterator is made; outcomes that happen while nobody iterates are kept (the last
/// ``backlogLimit``, plus the damaged records found when the outbox opened) and handed to the next iterator
/// made. Memory stays bounded: beyond that backlog, or when one iterator falls more than
/// ``bufferLimit`` outcomes behind, the oldest are dropped and their number is reported in their place
/// (``OutboxOutcome/outcomesDropped(count:)``). Outcomes are not durable: one that happens just before the
/// process dies is never reported (the mutation is settled all the same). The sequence ends when the outbox
/// is closed.
public struct OutboxOutcomes: AsyncSequence, Sendable {
    /// An outcome.
    public typealias Element = OutboxOutcome

    /// How many outcomes are kept while nobody listens (the damaged records found at opening come on top).
    public static let backlogLimit = 100
    /// How many outcomes one iterator may fall behind before the oldest are dropped.
    public static let bufferLimit = 1_000

    let broadcaster: Broadcaster<OutboxOutcome>

    /// Iterates the outcomes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<OutboxOutcome>.Iterator
        let broadcaster: Broadcaster<OutboxOutcome>
        let subscriber: Int

        /// The next outcome, or `nil` once the outbox is closed.
        public mutating func next() async -> OutboxOutcome? {
            let dropped = broadcaster.takeDropped(of: subscriber)
            if dropped > 0 { return .outcomesDropped(count: dropped) }
            return await base.next()
        }
    }

    /// An iterator that receives every outcome from now on (and those kept while nobody listened).
    public func makeAsyncIterator() -> AsyncIterator {
        let (subscriber, stream) = broadcaster.subscribeCounting()
        return AsyncIterator(base: stream.makeAsyncIterator(), broadcaster: broadcaster, subscriber: subscriber)
    }
}

/// Hands values to every subscriber's stream; values sent while there is none are kept (up to `backlogLimit`,
/// the oldest dropped beyond it) for the next subscriber. ``finish()`` ends every stream, present and future.
final class Broadcaster<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `lock`.
    private let lock = NSLock()
    /// Held by ``send(_:)`` from reading the subscribers to the last yield, so that every subscriber sees the
    /// values in one order, while `lock` is held only briefly: a subscriber woken by a yield (on the same CPU, it
    /// may run at once) does not wait for the sender in its next ``takeDropped(of:)``, except while the sender
    /// counts a value that subscriber dropped.
    private let sendLock = NSLock()
    private var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
    private var backlog: [Value] = []
    private var backlogDropped = 0
    private var dropped: [Int: Int] = [:]
    private var nextID = 0
    private var finished = false
    private let backlogLimit: Int
    private let bufferLimit: Int?

    /// `backlogLimit` values kept while nobody subscribes; `bufferLimit` (`nil`: unbounded) values a
    /// subscriber may fall behind. Values dropped are counted (``takeDropped(of:)``).
    init(backlogLimit: Int, bufferLimit: Int? = nil) {
        self.backlogLimit = backlogLimit
        self.bufferLimit = bufferLimit
    }

    deinit {
        for continuation in subscribers.values { continuation.finish() }
    }

    func subscribe() -> AsyncStream<Value> {
        subscribeCounting().stream
    }

    /// A new subscriber's stream and its identity (for ``takeDropped(of:)``), which inherits the count of
    /// the backlog's dropped values.
    func subscribeCounting() -> (id: Int, stream: AsyncStream<Value>) {
        let policy: AsyncStream<Value>.Continuation.BufferingPolicy = bufferLimit.map { .bufferingNewest($0) } ?? .unbounded
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: policy)
        lock.lock()
        let id = nextID
        nextID += 1
        let kept = backlog
        backlog.removeAll()
        if backlogDropped > 0 { dropped[id] = backlogDropped }
        backlogDropped = 0
        let isFinished = finished
        if !isFinished { subscribers[id] = continuation }
        for value in kept {   // under the lock: before any value sent after them
            if case .dropped = continuation.yield(value), !isFinished { dropped[id, default: 0] += 1 }
        }
        lock.unlock()
        if isFinished {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] termination in
                // Finished by ``finish()`` (which let go of it): its count of dropped values stays for its last reads.
                if case .cancelled = termination { self?.remove(id) }
            }
        }
        return (id, stream)
    }

    /// How many values `id` lost since it last asked (reset to 0).
    func takeDropped(of id: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return dropped.removeValue(forKey: id) ?? 0
    }

    func send(_ value: Value) {
        sendLock.lock()   // in the order sent
        defer { sendLock.unlock() }
        lock.lock()
        if subscribers.isEmpty, !finished, backlogLimit > 0 {
            if backlog.count >= backlogLimit {
                backlog.removeFirst()
                backlogDropped += 1
            }
            backlog.append(value)
        }
        let receivers = subscribers
        lock.unlock()
        for (id, continuation) in receivers {
            guard case .dropped = continuation.yield(value) else { continue }
            lock.lock()
            if subscribers[id] != nil { dropped[id, default: 0] += 1 }
            lock.unlock()
        }
    }

    func finish() {
        sendLock.lock()   // after a send in progress: its value is not lost
        defer { sendLock.unlock() }
        lock.lock()
        finished = true
        let continuations = Array(subscribers.values)
        subscribers.removeAll()
        lock.unlock()
        for continuation in continuations { continuation.finish() }
    }

    private func remove(_ id: Int) {
        lock.lock()
        defer { lock.unlock() }
        subscribers[id] = nil
        dropped[id] = nil
    }
}
