import Foundation

/// The outcomes of an ``Outbox``'s mutations as they happen, as an `AsyncSequence` that never throws.
///
/// Every iteration (`for await outcome in outbox.outcomes`) receives every outcome from the moment its
/// iterator is made; outcomes that happen while nobody iterates are kept (up to the outbox's
/// ``OutboxConfiguration/maximumCount`` plus its damaged records) and handed to the next iterator made, so the
/// damaged records found when the outbox opened, and what was delivered before the app started listening,
/// are not lost. The sequence ends when the outbox is closed.
public struct OutboxOutcomes: AsyncSequence, Sendable {
    /// An outcome.
    public typealias Element = OutboxOutcome

    let broadcaster: Broadcaster<OutboxOutcome>

    /// Iterates the outcomes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<OutboxOutcome>.Iterator

        /// The next outcome, or `nil` once the outbox is closed.
        public mutating func next() async -> OutboxOutcome? {
            await base.next()
        }
    }

    /// An iterator that receives every outcome from now on (and those kept while nobody listened).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: broadcaster.subscribe().makeAsyncIterator())
    }
}

/// Hands values to every subscriber's stream; values sent while there is none are kept (up to `backlogLimit`,
/// the oldest dropped beyond it) for the next subscriber. ``finish()`` ends every stream, present and future.
final class Broadcaster<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `lock`.
    private let lock = NSLock()
    private var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
    private var backlog: [Value] = []
    private var nextID = 0
    private var finished = false
    private let backlogLimit: Int

    init(backlogLimit: Int) {
        self.backlogLimit = backlogLimit
    }

    deinit {
        for continuation in subscribers.values { continuation.finish() }
    }

    func subscribe() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .unbounded)
        lock.lock()
        let id = nextID
        nextID += 1
        let kept = backlog
        backlog.removeAll()
        let isFinished = finished
        if !isFinished { subscribers[id] = continuation }
        for value in kept { continuation.yield(value) }   // under the lock: before any value sent after them
        lock.unlock()
        if isFinished {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in self?.remove(id) }
        }
        return stream
    }

    func send(_ value: Value) {
        lock.lock()
        defer { lock.unlock() }
        if subscribers.isEmpty, !finished, backlogLimit > 0 {
            if backlog.count >= backlogLimit { backlog.removeFirst() }
            backlog.append(value)
        }
        for continuation in subscribers.values { continuation.yield(value) }   // under the lock: in the order sent
    }

    func finish() {
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
    }
}
