import Foundation

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

/// A subscriber that asks for values only when the test says so (``request(_:)``), and records what it
/// receives; tests await what they expect with ``values(count:)`` and ``completion()``.
final class Probe<Input: Sendable>: Subscriber, @unchecked Sendable {
    typealias Failure = any Error

    // @unchecked: every `var` is guarded by `lock`.
    private let lock = NSLock()
    private let initialDemand: Subscribers.Demand
    private let onCompletion: (@Sendable () -> Void)?
    private let demandFromReceive: Subscribers.Demand
    private let cancelsAfter: Int?
    private var subscription: (any Subscription)?
    private var received: [Input] = []
    private var ended: Subscribers.Completion<any Error>?
    private var waiters: [(ready: () -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    /// A probe that asks for `initialDemand` values when it subscribes, asks for `demandFromReceive` more
    /// with each value (returned from `receive(_:)`), cancels the subscription from inside `receive(_:)`
    /// once it has `cancelsAfter` values, and calls `onCompletion` after it recorded the completion.
    init(
        initialDemand: Subscribers.Demand = .unlimited, demandFromReceive: Subscribers.Demand = .none, cancelsAfter: Int? = nil,
        onCompletion: (@Sendable () -> Void)? = nil
    ) {
        self.initialDemand = initialDemand
        self.demandFromReceive = demandFromReceive
        self.cancelsAfter = cancelsAfter
        self.onCompletion = onCompletion
    }

    func receive(subscription: any Subscription) {
        lock.lock()
        self.subscription = subscription
        lock.unlock()
        if initialDemand > 0 { subscription.request(initialDemand) }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        var count = 0
        update {
            received.append(input)
            count = received.count
        }
        if let cancelsAfter, count >= cancelsAfter { cancel() }
        return demandFromReceive
    }

    func receive(completion: Subscribers.Completion<any Error>) {
        update { ended = completion }
        onCompletion?()
    }

    /// Asks the subscription for `count` more values.
    func request(_ count: Int) {
        lock.lock()
        let subscription = self.subscription
        lock.unlock()
        subscription?.request(.max(count))
    }

    /// Cancels the subscription.
    func cancel() {
        lock.lock()
        let subscription = self.subscription
        lock.unlock()
        subscription?.cancel()
    }

    /// The values received so far.
    var values: [Input] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// The completion received, if any.
    var completed: Subscribers.Completion<any Error>? {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// Waits until `count` values (or a completion) arrived, and returns the values.
    func values(count: Int) async -> [Input] {
        await waitUntil { self.received.count >= count || self.ended != nil }
        return values
    }

    /// Waits until a value that satisfies `condition` (or a completion) arrived, and returns the values.
    func values(until condition: @escaping (Input) -> Bool) async -> [Input] {
        await waitUntil { self.received.contains(where: condition) || self.ended != nil }
        return values
    }

    /// Waits for the completion, and returns it.
    func completion() async -> Subscribers.Completion<any Error>? {
        await waitUntil { self.ended != nil }
        return completed
    }

    /// The failure the publisher ended with, after waiting for it; `nil` when it finished.
    func failure() async -> (any Error)? {
        if case .failure(let error) = await completion() { return error }
        return nil
    }

    private func update(_ change: () -> Void) {
        lock.lock()
        change()
        let ready = waiters.filter { $0.ready() }
        waiters.removeAll { $0.ready() }
        lock.unlock()
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Waits until `ready` (read with `lock` held) holds; the suite's time limit ends a test that waits forever.
    private func waitUntil(_ ready: @escaping () -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if ready() {
                lock.unlock()
                continuation.resume()
                return
            }
            waiters.append((ready, continuation))
            lock.unlock()
        }
    }
}
