// The bridge compiles in the library where Combine is (Apple platforms), and in the CombineBridge test package
// against OpenCombine where Combine is not (Linux). It compiles to nothing in the library on Linux, and in that
// package on Apple platforms (the library has it there: compiled twice, its symbols would be ambiguous).
#if !NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)
    import Combine
#elseif NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine)
    import Networking
    import OpenCombine
#endif

#if (!NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)) || (NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine))
    import Foundation

    /// A cold publisher whose values an async `body` produces, one for each value the subscriber asked for.
    ///
    /// Every publisher of the bridge is one of these. Each subscription makes its own body (``makeBody``
    /// runs when the subscriber subscribes) and starts it on the first demand, so nothing is sent before.
    /// The body waits for demand before it sends each value (``DemandSubscription/reserve()``): a stream
    /// is read only as fast as the subscriber asks, one value ahead at most. Cancelling the subscription cancels the body's task,
    /// which cancels the call it awaits.
    struct DemandPublisher<Output: Sendable, Failure: Error>: Publisher {
        /// Makes the body of one subscription; it throws to fail the publisher.
        let makeBody: @Sendable () -> @Sendable (DemandSubscription<Output>) async throws -> Void
        /// What the subscriber is told when the body threw (`Never` publishers finish instead).
        let completion: @Sendable (any Error) -> Subscribers.Completion<Failure>

        func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let completion = self.completion
            let subscription = DemandSubscription<Output>(
                body: makeBody(),
                receiveValue: { subscriber.receive($0) },
                receiveEnd: { error in subscriber.receive(completion: error.map(completion) ?? .finished) }
            )
            subscriber.receive(subscription: subscription)
        }
    }

    extension DemandPublisher where Failure == any Error {
        /// A publisher that runs `body` for each subscription and fails with the error it throws.
        init(_ body: @escaping @Sendable (DemandSubscription<Output>) async throws -> Void) {
            self.init(makeBody: { body }, completion: { .failure($0) })
        }
    }

    /// One subscription of a ``DemandPublisher``: counts the subscriber's demand, runs the body in a task of
    /// its own (a ``StartedCall``) from the first demand, and hands the body's values to the subscriber.
    ///
    /// The running task holds the subscription (the call's completion captures it) until the body ends or
    /// the subscription is cancelled: values arrive even when the app keeps only the `AnyCancellable`.
    final class DemandSubscription<Output: Sendable>: Subscription, @unchecked Sendable {
        // @unchecked: every `var` is guarded by `lock`. Combine may call `request` and `cancel` from any
        // thread; the subscriber is called from the body's task only, one call at a time.
        private let lock = NSLock()
        /// The body, until it starts.
        private var body: (@Sendable (DemandSubscription<Output>) async throws -> Void)?
        /// The subscriber's `receive(_:)`; `nil` once the subscription ended or was cancelled.
        private var receiveValue: ((Output) -> Subscribers.Demand)?
        /// The subscriber's `receive(completion:)`: finished for `nil`, else the publisher's failure.
        private var receiveEnd: (((any Error)?) -> Void)?
        /// Values asked for and not yet reserved by the body.
        private var demand = Subscribers.Demand.none
        /// The body, waiting in ``reserve()`` for demand.
        private var waiter: CheckedContinuation<Void, any Error>?
        private var call: StartedCall<Void>?

        init(
            body: @escaping @Sendable (DemandSubscription<Output>) async throws -> Void,
            receiveValue: @escaping (Output) -> Subscribers.Demand,
            receiveEnd: @escaping ((any Error)?) -> Void
        ) {
            self.body = body
            self.receiveValue = receiveValue
            self.receiveEnd = receiveEnd
        }

        func request(_ more: Subscribers.Demand) {
            guard more > 0 else { return }
            lock.lock()
            guard receiveValue != nil else {
                lock.unlock()
                return
            }
            demand += more
            let waiter = takeWaiterIfDemanded()
            if let body {
                self.body = nil
                call = StartedCall.start({ try await body(self) }, completion: { result in self.end(result) })
            }
            lock.unlock()
            waiter?.resume()
        }

        func cancel() {
            lock.lock()
            receiveValue = nil
            receiveEnd = nil
            body = nil
            let (call, waiter) = (self.call, self.waiter)
            self.waiter = nil
            lock.unlock()
            call?.cancel()   // cancels the task, and with it the call it awaits
            waiter?.resume(throwing: CancellationError())
        }

        /// Waits until the subscriber asked for a value and takes one of its demand: the body calls this
        /// before it produces each value, so a stream is read no faster than the subscriber asks.
        ///
        /// In a cancelled task (a child task the body cancelled, such as a transfer's progress once the
        /// transfer returned) it takes demand that is there, and throws instead of waiting for more.
        /// - Throws: `CancellationError` when the subscription or the task was cancelled.
        func reserve() async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    lock.lock()
                    if receiveValue == nil {
                        lock.unlock()
                        continuation.resume(throwing: CancellationError())
                    } else if demand > 0 {
                        demand -= 1
                        lock.unlock()
                        continuation.resume()
                    } else if Task.isCancelled {   // read under `lock`: the handler below ran, or will find the waiter
                        lock.unlock()
                        continuation.resume(throwing: CancellationError())
                    } else {
                        waiter = continuation
                        lock.unlock()
                    }
                }
            } onCancel: {
                lock.lock()
                let waiter = self.waiter
                self.waiter = nil
                lock.unlock()
                waiter?.resume(throwing: CancellationError())
            }
        }

        /// Ends the subscription with `error` now, without waiting for demand (Combine sends a completion
        /// without one), unless it was cancelled. Whether the subscriber is told is decided under `lock`, in
        /// one step with ``cancel()``: either the subscriber gets `error`, or the subscription had been
        /// cancelled and this returns `false` (what `error` carries is the caller's to hand elsewhere).
        func fail(_ error: any Error) -> Bool {
            lock.lock()
            let receiveEnd = self.receiveEnd
            self.receiveEnd = nil
            receiveValue = nil
            lock.unlock()
            guard let receiveEnd else { return false }
            receiveEnd(error)
            return true
        }

        /// Hands `value` to the subscriber (after ``reserve()``), and counts what more it asks for.
        func send(_ value: Output) {
            lock.lock()
            let receiveValue = self.receiveValue
            lock.unlock()
            guard let receiveValue else { return }
            request(receiveValue(value))
        }

        /// Hands the values of `sequence` to the subscriber as it asks for them, holding at most one value
        /// read ahead: after each value it reads the next and waits for demand to send it, so the end of the
        /// sequence, or its failure, reaches the subscriber without waiting for demand, and a slow subscriber
        /// holds the sequence back (it is never read into a backlog).
        func send<Values: AsyncSequence>(contentsOf sequence: Values) async throws where Values.Element == Output {
            var iterator = sequence.makeAsyncIterator()
            while let value = try await iterator.next() {
                try await reserve()
                send(value)
            }
        }

        /// The waiting body's continuation, with one unit of demand taken for it, when it waits and there is
        /// demand. Called with `lock` held.
        private func takeWaiterIfDemanded() -> CheckedContinuation<Void, any Error>? {
            guard let waiter, demand > 0 else { return nil }
            demand -= 1
            self.waiter = nil
            return waiter
        }

        /// The body ended: the subscriber hears how, unless it cancelled first.
        private func end(_ result: Result<Void, any Error>) {
            lock.lock()
            let receiveEnd = self.receiveEnd
            receiveValue = nil
            self.receiveEnd = nil
            call = nil
            lock.unlock()
            guard let receiveEnd else { return }
            switch result {
            case .success: receiveEnd(nil)
            case .failure(let error): receiveEnd(error)
            }
        }
    }
#endif
