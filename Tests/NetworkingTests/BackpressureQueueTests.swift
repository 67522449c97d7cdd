#if canImport(FoundationNetworking)
    import Dispatch
    import Foundation
    import FoundationNetworking
    import Testing

    @testable import Networking

    /// The session delegate queue on Linux (``BackpressureQueue``): its bound, the wait that never hangs,
    /// and the cancel the size limit sends from another queue. Its effect on memory is measured over TCP,
    /// in a process of its own per case, by IntegrationTests' BodyMemoryTests.
    @Suite("Back-pressure of the session delegate queue (Linux)", SuiteTimeLimit.oneMinute)
    struct BackpressureQueueTests {
        /// The dispatch queue the test's queue runs its messages on: its own, as the provider's is, so a
        /// message that blocks (on a gate) holds that queue's thread, not one of the global queues' few, which
        /// the other suites' timers need. (Kept here: `underlyingQueue` is `unowned(unsafe)`.)
        let callbacks = DispatchQueue(label: "BackpressureQueueTests", qos: .userInitiated)

        /// A queue as the provider makes it: serial, on ``callbacks``.
        func makeQueue(bound: Int, stallTimeout: TimeInterval = 20) -> BackpressureQueue {
            let queue = BackpressureQueue(bound: bound, stallTimeout: stallTimeout)
            queue.maxConcurrentOperationCount = 1
            queue.underlyingQueue = callbacks
            return queue
        }

        /// Runs blocking `work` on a thread of its own, off the test's cooperative pool.
        func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: work()) }
            }
        }

        /// Runs `work(0..<count)` on `count` threads of their own at once, and returns when all ended.
        func onThreads(_ count: Int, _ work: @escaping @Sendable (Int) -> Void) async {
            let group = DispatchGroup()
            for index in 0..<count {
                group.enter()
                Thread.detachNewThread {
                    work(index)
                    group.leave()
                }
            }
            await onThread { group.wait() }
        }

        /// Waits up to `seconds` for `condition`, checking every 10 ms.
        func eventually(within seconds: TimeInterval = 10, _ condition: () -> Bool) async -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while !condition() {
                if Date() > end { return false }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            return true
        }

        @Test func aSenderWaitsWhileTheBoundIsQueuedAndGoesOnOnceHalfRan() async {
            // GIVEN a queue of 4 whose first message waits on a gate, and 3 more queued behind it
            let queue = makeQueue(bound: 4)
            let gate = DispatchSemaphore(value: 0)
            let ran = Recorder<Int>()
            queue.addOperation {
                gate.wait()
                ran.append(0)
            }
            for index in 1...3 { queue.addOperation { ran.append(index) } }
            // WHEN a fifth is sent from another thread
            let sent = Recorder<Bool>()
            Thread.detachNewThread {
                queue.addOperation { ran.append(4) }
                sent.append(true)
            }
            // THEN its sender waits while the first message does not end
            try? await Task.sleep(nanoseconds: 300_000_000)
            #expect(sent.count == 0, "the fifth message waits while 4 are queued")
            #expect(queue.pendingCount == 4)
            // and goes on once the queue drained to half, every message run in the order sent
            gate.signal()
            #expect(await eventually { sent.count == 1 && ran.count == 5 })
            #expect(ran.all == [0, 1, 2, 3, 4])
            #expect(queue.stallCount == 0)
            #expect(await eventually { queue.pendingCount == 0 })
        }

        @Test func aMessageTheQueueSendsToItselfNeverWaits() async {
            // GIVEN a queue of 2, and a message that sends ten more from the queue itself
            let queue = makeQueue(bound: 2)
            let ran = Recorder<Int>()
            queue.addOperation {
                for index in 0..<10 { queue.addOperation { ran.append(index) } }
            }
            // WHEN it runs, THEN it is never held (it would wait for itself: 20 s, then a stall), and
            // everything runs
            #expect(await eventually { ran.count == 10 })
            #expect(queue.stallCount == 0)
        }

        @Test func aSenderGivesUpWhenNoMessageRunsAndWaitsAgainOnlyOnceOneRan() async {
            // GIVEN a queue of 2 whose running message waits for something that never comes while its sender waits
            let queue = makeQueue(bound: 2, stallTimeout: 0.3)
            let gate = DispatchSemaphore(value: 0)
            queue.addOperation { gate.wait() }
            queue.addOperation {}
            // WHEN a third is sent
            let first = await onThread {
                let started = Date()
                queue.addOperation {}
                return Date().timeIntervalSince(started)
            }
            // THEN its sender gives up after the stall timeout, instead of waiting forever (a deadlock)
            #expect(first >= 0.25, "waited \(first) s")
            #expect(queue.stallCount == 1)
            // and the next sender does not wait while nothing ran (waiting, it would give up again: a second stall)
            await onThread { queue.addOperation {} }
            #expect(queue.stallCount == 1)
            // WHEN the stuck message ends, THEN everything runs, and a full queue holds its senders again
            gate.signal()
            #expect(await eventually { queue.pendingCount == 0 })
            let gateAgain = DispatchSemaphore(value: 0)
            queue.addOperation { gateAgain.wait() }
            queue.addOperation {}
            let started = Recorder<Bool>()
            let waited = Recorder<TimeInterval>()
            Thread.detachNewThread {
                let start = Date()
                started.append(true)
                queue.addOperation {}
                waited.append(Date().timeIntervalSince(start))
            }
            #expect(await eventually { started.count == 1 })
            try? await Task.sleep(nanoseconds: 100_000_000)
            gateAgain.signal()
            #expect(await eventually { waited.count == 1 && queue.pendingCount == 0 })
            #expect((waited.all.first ?? 0) >= 0.09, "waits again once a message ran")
        }

        @Test func hundredsOfSendersAtOnceStayWithinTheBoundAndLoseNothing() async {
            // GIVEN a queue of 16 whose messages are slower than 8 senders sending 250 each
            let queue = makeQueue(bound: 16)
            let ran = Recorder<Int>()
            let seen = Recorder<Int>()
            let senders = 8
            let perSender = 250
            // WHEN they all send at once
            await onThreads(senders) { sender in
                for index in 0..<perSender {
                    queue.addOperation {
                        seen.append(queue.pendingCount)
                        usleep(50)
                        ran.append(sender * perSender + index)
                    }
                }
            }
            // THEN every message runs once, and no more than the bound plus one per sender were ever queued
            #expect(await eventually { ran.count == senders * perSender })
            #expect(Set(ran.all).count == senders * perSender)
            let most = seen.all.max() ?? 0
            #expect(most >= 16, "the senders outran the queue, so the bound was reached")
            #expect(most <= 16 + senders, "at most \(16 + senders) queued, saw \(most)")
            #expect(queue.stallCount == 0)
            #expect(await eventually { queue.pendingCount == 0 })
        }

        @Test func theProvidersSessionSendsItsCallbacksThroughABoundedSerialQueue() throws {
            // GIVEN a provider, WHEN its session was made, THEN its delegate queue is a back-pressure queue of 64, one at a time
            let provider = NetworkProvider(configuration: .ephemeral)
            let queue = try #require(provider.urlSession.delegateQueue as? BackpressureQueue)
            #expect(queue.bound == BackpressureQueue.defaultBound)
            #expect(queue.bound == 64)
            #expect(queue.maxConcurrentOperationCount == 1)
        }

        @Test func aSizeLimitCancelsItsTaskFromAnotherQueue() async {
            // GIVEN an attempt's task handle, and a task that records where it is cancelled
            let queue = makeQueue(bound: 4)
            let task = CancelRecordingTask(delegateQueue: queue)
            let handle = TaskHandle()
            handle.start(task)
            // WHEN the transfer stops it from the delegate queue (a body over its limit)
            queue.addOperation { handle.cancelTask() }
            // THEN the task is cancelled, never on the delegate queue (corelibs' cancel waits for the session's
            // work queue, which may be waiting for the delegate queue to drain)
            #expect(await eventually { task.cancels.count == 1 })
            #expect(task.cancels.all == [false])
        }
    }

    /// A task that is never sent: it records whether each `cancel()` ran on `delegateQueue`.
    final class CancelRecordingTask: URLSessionDataTask, @unchecked Sendable {
        let cancels = Recorder<Bool>()
        private let delegateQueue: OperationQueue

        init(delegateQueue: OperationQueue) {
            self.delegateQueue = delegateQueue
            super.init()
        }

        override func resume() {}

        override func cancel() {
            cancels.append(OperationQueue.current === delegateQueue)
        }
    }
#endif
