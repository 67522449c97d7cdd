import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The provider's session delegate queue: one operation at a time, on the provider's callback queue.
enum SessionDelegateQueue {
    /// A serial delegate queue running on `underlyingQueue`: a ``BackpressureQueue`` on Linux, a plain
    /// `OperationQueue` on Apple platforms, whose loading system reads no faster than its delegate takes the bytes.
    static func make(on underlyingQueue: DispatchQueue) -> OperationQueue {
        #if canImport(FoundationNetworking)
            let queue: OperationQueue = BackpressureQueue()
        #else
            let queue = OperationQueue()
        #endif
        queue.maxConcurrentOperationCount = 1
        queue.underlyingQueue = underlyingQueue   // unowned by the operation queue: the provider keeps it
        return queue
    }

    /// Runs `work` on another queue, never on the session's delegate queue: for what calls into URLSession
    /// (cancelling a task, answering a challenge by cancelling it), which on Linux waits for the session's
    /// work queue, which a ``BackpressureQueue`` may be holding until the delegate queue drains. A queue of
    /// its own each time (a serial queue gets a thread of its own when it needs one): that wait, up to
    /// seconds while libcurl keeps the work queue busy, must not hold one of the few threads of the global
    /// queues, which timers and the rest of the app need.
    static func leave(_ work: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "Networking.SessionDelegateQueue.leave", qos: .userInitiated).async(execute: work)
    }
}

#if canImport(FoundationNetworking)
    /// The session's delegate queue on Linux: it makes the session wait while too many of its delegate
    /// messages are queued, so a body arrives no faster than the delegate counts it.
    ///
    /// What it absorbs (swift-corelibs-foundation, Swift 6.3.1): the session's work queue runs libcurl, and
    /// hands every chunk libcurl writes (at most 16 KiB, decoded gzip, deflate, br and zstd included) to the
    /// delegate with `delegateQueue.addOperation { … }` and reads on at once. A fast body or a compression
    /// bomb then piles up gigabytes of chunks in the queue before the delegate counts them against the size
    /// limit, and a cancel takes effect only after that backlog drained (measured: +2.1 GiB for 2 GiB of
    /// gzip'd zeros; see Docs/Limits.md). Here `addOperation` blocks its caller, the work queue, while
    /// ``bound`` messages wait, until half of them ran: libcurl stops reading, and the bytes wait in the
    /// kernel's socket buffer, not in this process.
    ///
    /// The wait can never hang: it gives up when no message ran for ``stallTimeout`` (a delegate message
    /// waiting for the work queue itself, as `URLSessionTask.cancel()` does, would otherwise wait forever),
    /// and waits again only once one ran. The delegate never calls into URLSession synchronously (see
    /// ``SessionDelegateQueue/leave(_:)``), so that timeout is a safety net, not a path taken. Nothing waits
    /// when the queue itself adds a message, nor when fewer than ``bound`` are queued: an ordinary call pays
    /// a lock per message.
    final class BackpressureQueue: OperationQueue, @unchecked Sendable {
        // @unchecked: `pending`, `finished`, `waiting`, `stalled` and `stalls` are guarded by `condition`.

        /// Messages queued (or running) before a new one makes its sender wait: 64, so at most 1 MiB of
        /// 16 KiB chunks.
        static let defaultBound = 64
        /// How long a sender waits with no message running to its end before it goes on anyway: 0.5 s.
        static let defaultStallTimeout: TimeInterval = 0.5

        let bound: Int
        let stallTimeout: TimeInterval
        private let condition = NSCondition()
        private var pending = 0
        /// Messages run so far: a waiting sender sees progress by it.
        private var finished: UInt64 = 0
        private var waiting = 0
        /// A sender gave up waiting, and none waits again until a message ran.
        private var stalled = false
        private var stalls = 0

        init(bound: Int = BackpressureQueue.defaultBound, stallTimeout: TimeInterval = BackpressureQueue.defaultStallTimeout) {
            self.bound = max(bound, 2)
            self.stallTimeout = stallTimeout
            super.init()
        }

        /// How URLSession hands every delegate message to the queue (the `Operation` overload is left as
        /// it is: corelibs sends none through it).
        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            admit()
            super.addOperation { [self] in
                block()
                didRun()
            }
        }

        /// Messages queued or running now.
        var pendingCount: Int {
            condition.lock()
            defer { condition.unlock() }
            return pending
        }

        /// How many times a sender gave up waiting because no message ran for ``stallTimeout``.
        var stallCount: Int {
            condition.lock()
            defer { condition.unlock() }
            return stalls
        }

        /// Waits while ``bound`` messages are queued, until half of them ran, then counts the new one.
        private func admit() {
            condition.lock()
            defer { condition.unlock() }
            if pending >= bound, !stalled, OperationQueue.current !== self {
                waiting += 1
                var seen = finished
                var progressed = Date()
                while pending > bound / 2 {
                    if finished != seen {
                        (seen, progressed) = (finished, Date())
                    } else if Date().timeIntervalSince(progressed) >= stallTimeout {
                        stalled = true
                        stalls += 1
                        break
                    }
                    _ = condition.wait(until: progressed.addingTimeInterval(stallTimeout))
                }
                waiting -= 1
            }
            pending += 1
        }

        private func didRun() {
            condition.lock()
            pending -= 1
            finished &+= 1
            stalled = false
            if waiting > 0, pending <= bound / 2 { condition.broadcast() }
            condition.unlock()
        }
    }
#endif
